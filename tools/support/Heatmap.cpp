//===- Heatmap.cpp - Draw a matrix as a labelled PNG heatmap --------------===//
//
// Cells are filled without antialiasing, so that every pixel of a cell has
// exactly the colour of its value (the tests read them back); text is drawn
// by cairo with the system's sans-serif font.
//
//===----------------------------------------------------------------------===//

#include "tools/support/Heatmap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>

using namespace mha::runtime;

namespace {
constexpr double kLabelFontSize = 13;
constexpr double kTitleFontSize = 16;
constexpr int kMargin = 12;
constexpr int kGap = 6;
/// The side of the map's larger dimension aims at this many pixels.
constexpr int kMapTarget = 480;
constexpr int kMaxCellSize = 48;
constexpr int kBarWidth = 16;
constexpr int kMinBarHeight = 120;
constexpr int kNumTicks = 5;

/// Anchors of matplotlib's viridis, evenly spaced from 0 to 1.
constexpr Rgb kViridis[] = {{68, 1, 84},    {71, 45, 123},  {59, 82, 139},
                            {44, 114, 142}, {33, 145, 140}, {40, 174, 128},
                            {94, 201, 98},  {173, 220, 48}, {253, 231, 37}};

/// A cairo context that draws text in one font; owns what it creates.
class Canvas {
public:
  Canvas(int width, int height)
      : surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height)),
        cr(cairo_create(surface)) {
    setFont(kLabelFontSize, /*bold=*/false);
  }
  ~Canvas() {
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
  }
  Canvas(const Canvas &) = delete;
  Canvas &operator=(const Canvas &) = delete;

  void setFont(double size, bool bold) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD
                                : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
  }

  double textWidth(const std::string &text) {
    cairo_text_extents_t extents;
    cairo_text_extents(cr, text.c_str(), &extents);
    return extents.x_advance;
  }

  /// Draws `text` with its baseline starting at (x, y), turned a quarter to
  /// the left (reading upwards) if `vertical`.
  void text(const std::string &text, double x, double y, bool vertical) {
    cairo_save(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_translate(cr, x, y);
    if (vertical)
      cairo_rotate(cr, -M_PI / 2);
    cairo_move_to(cr, 0, 0);
    cairo_show_text(cr, text.c_str());
    cairo_restore(cr);
  }

  /// Fills a rectangle with exactly `color`.
  void fill(int x, int y, int width, int height, Rgb color) {
    cairo_save(cr);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    cairo_set_source_rgb(cr, color.red / 255.0, color.green / 255.0,
                         color.blue / 255.0);
    cairo_rectangle(cr, x, y, width, height);
    cairo_fill(cr);
    cairo_restore(cr);
  }

  llvm::Error writePng(llvm::StringRef path) {
    cairo_surface_flush(surface);
    cairo_status_t status = cairo_surface_status(surface);
    if (status == CAIRO_STATUS_SUCCESS)
      status = cairo_surface_write_to_png(surface, path.str().c_str());
    if (status != CAIRO_STATUS_SUCCESS)
      return llvm::createStringError(llvm::formatv(
          "cannot write '{0}': {1}", path, cairo_status_to_string(status)));
    return llvm::Error::success();
  }

private:
  cairo_surface_t *surface;
  cairo_t *cr;
};

/// Label `i` of `labels`, or the position `i` when there are none.
std::string labelOf(const std::vector<std::string> &labels, int64_t i) {
  return labels.empty() ? std::to_string(i) : labels[i];
}

/// The widest label of an axis of `count` entries, in the label font.
double widestLabel(Canvas &canvas, const std::vector<std::string> &labels,
                   int64_t count) {
  double widest = 0;
  for (int64_t i = 0; i < count; ++i)
    widest = std::max(widest, canvas.textWidth(labelOf(labels, i)));
  return widest;
}

/// Every how many cells a label fits without touching the next one, rounded
/// up to 1, 2 or 5 times a power of ten so that the labels are round
/// positions.
int64_t labelStep(double labelExtent, int cellSize) {
  auto minimum = int64_t(std::ceil((labelExtent + 2) / cellSize));
  for (int64_t scale = 1;; scale *= 10)
    for (int64_t multiple : {1, 2, 5})
      if (multiple * scale >= minimum)
        return multiple * scale;
}

/// The colour bar's tick values, 0 to `max`, as text.
std::string tickText(double value, double max) {
  return max >= 0.1 ? llvm::formatv("{0:F2}", value).str()
                    : llvm::formatv("{0:E1}", value).str();
}

/// Whether column labels are written upwards: words, and numbers that would
/// need many cells each, take less room that way.
bool verticalColumnLabels(const HeatmapLabels &labels, double widest,
                          int cellSize) {
  return !labels.columns.empty() || widest > 2 * cellSize;
}

/// The layout plus what drawing needs from the measurements.
struct Measured {
  HeatmapLayout layout;
  double lineHeight = 0;
  bool verticalColumns = false;
};

Measured measure(int64_t rows, int64_t columns, const HeatmapLabels &labels) {
  Canvas scratch(1, 1);
  Measured m;
  HeatmapLayout &l = m.layout;
  m.lineHeight = std::ceil(kLabelFontSize * 1.3);
  l.cellSize =
      std::clamp<int>(kMapTarget / std::max(rows, columns), 1, kMaxCellSize);
  double rowWidth = widestLabel(scratch, labels.rows, rows);
  double columnWidth = widestLabel(scratch, labels.columns, columns);
  m.verticalColumns = verticalColumnLabels(labels, columnWidth, l.cellSize);
  l.rowLabelStep = labelStep(m.lineHeight, l.cellSize);
  l.columnLabelStep =
      labelStep(m.verticalColumns ? m.lineHeight : columnWidth, l.cellSize);

  int mapWidth = l.cellSize * columns, mapHeight = l.cellSize * rows;
  l.mapY = kMargin + int(kTitleFontSize * 1.3) + kGap;
  l.mapX = kMargin + int(m.lineHeight) + kGap + int(std::ceil(rowWidth)) + kGap;
  l.barX = l.mapX + mapWidth + 3 * kGap;
  l.barWidth = kBarWidth;
  l.barTop = l.mapY;
  l.barBottom = l.mapY + std::max(mapHeight, kMinBarHeight);

  double tickWidth = scratch.textWidth(tickText(0.0, 1.0));
  scratch.setFont(kTitleFontSize, /*bold=*/true);
  double titleWidth = scratch.textWidth(labels.title);
  l.width = std::max<int>(l.barX + l.barWidth + kGap + tickWidth + kMargin,
                          2 * kMargin + titleWidth);
  int columnLabels =
      m.verticalColumns ? int(std::ceil(columnWidth)) : int(m.lineHeight);
  int belowMap = l.mapY + mapHeight + kGap + columnLabels + kGap +
                 int(m.lineHeight) + kMargin;
  l.height = std::max(belowMap, l.barBottom + int(m.lineHeight) + kMargin);
  return m;
}
} // namespace

Rgb mha::runtime::heatmapColor(double fraction) {
  constexpr int segments = std::size(kViridis) - 1;
  // std::clamp passes NaN through, and int(NaN) below would index anywhere.
  if (!(fraction >= 0))
    fraction = 0;
  double position = std::min(fraction, 1.0) * segments;
  int low = std::min(int(position), segments - 1);
  double t = position - low;
  auto mix = [&](uint8_t a, uint8_t b) {
    return uint8_t(std::lround(a + (b - a) * t));
  };
  const Rgb &a = kViridis[low], &b = kViridis[low + 1];
  return {mix(a.red, b.red), mix(a.green, b.green), mix(a.blue, b.blue)};
}

int64_t mha::runtime::countNonFinite(const float *values, int64_t count) {
  return std::count_if(values, values + count,
                       [](float value) { return !std::isfinite(value); });
}

HeatmapLayout mha::runtime::layoutHeatmap(int64_t rows, int64_t columns,
                                          const HeatmapLabels &labels) {
  return measure(rows, columns, labels).layout;
}

llvm::Error mha::runtime::writeHeatmapPng(llvm::StringRef path,
                                          const float *values, int64_t rows,
                                          int64_t columns,
                                          const HeatmapLabels &labels) {
  if (rows <= 0 || columns <= 0)
    return llvm::createStringError(llvm::formatv(
        "cannot draw '{0}': a {1}x{2} map is empty", path, rows, columns));
  auto checkCount = [&](const std::vector<std::string> &given, int64_t count,
                        llvm::StringRef what) -> llvm::Error {
    if (given.empty() || int64_t(given.size()) == count)
      return llvm::Error::success();
    return llvm::createStringError(
        llvm::formatv("cannot draw '{0}': {1} {2} labels for {3} {2}s", path,
                      given.size(), what, count));
  };
  if (auto error = checkCount(labels.rows, rows, "row"))
    return error;
  if (auto error = checkCount(labels.columns, columns, "column"))
    return error;

  Measured m = measure(rows, columns, labels);
  const HeatmapLayout &l = m.layout;
  Canvas canvas(l.width, l.height);
  canvas.fill(0, 0, l.width, l.height, {255, 255, 255});

  // The scale comes from the finite values only: one NaN or infinity would
  // otherwise make every other cell NaN or 0. A map of zeros (a fully masked
  // head) or of nothing finite still gets a scale to read.
  float max = 0;
  for (int64_t i = 0; i < rows * columns; ++i)
    if (std::isfinite(values[i]))
      max = std::max(max, values[i]);
  if (!(max > 0))
    max = 1;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      float value = values[r * columns + c];
      canvas.fill(l.mapX + c * l.cellSize, l.mapY + r * l.cellSize, l.cellSize,
                  l.cellSize,
                  std::isfinite(value) ? heatmapColor(value / max)
                                       : kNonFiniteColor);
    }
  }

  // The colour bar: one line of pixels per shade, the top one for `max`.
  int barHeight = l.barBottom - l.barTop;
  for (int y = 0; y < barHeight; ++y)
    canvas.fill(l.barX, l.barBottom - 1 - y, l.barWidth, 1,
                heatmapColor(double(y) / (barHeight - 1)));
  double half = kLabelFontSize * 0.35;
  for (int i = 0; i < kNumTicks; ++i) {
    double fraction = double(i) / (kNumTicks - 1);
    int y = l.barBottom - 1 - int(std::lround(fraction * (barHeight - 1)));
    canvas.fill(l.barX + l.barWidth, y, 4, 1, {0, 0, 0});
    canvas.text(tickText(fraction * max, max), l.barX + l.barWidth + kGap,
                y + half, /*vertical=*/false);
  }

  // Row labels right-aligned against the map, column labels below it.
  int mapBottom = l.mapY + rows * l.cellSize;
  for (int64_t r = 0; r < rows; r += l.rowLabelStep) {
    std::string text = labelOf(labels.rows, r);
    canvas.text(text, l.mapX - kGap - canvas.textWidth(text),
                l.mapY + (r + 0.5) * l.cellSize + half, /*vertical=*/false);
  }
  double widestColumn = 0;
  for (int64_t c = 0; c < columns; c += l.columnLabelStep) {
    std::string text = labelOf(labels.columns, c);
    double width = canvas.textWidth(text);
    widestColumn = std::max(widestColumn, width);
    double center = l.mapX + (c + 0.5) * l.cellSize;
    if (m.verticalColumns)
      canvas.text(text, center + half, mapBottom + kGap + width,
                  /*vertical=*/true);
    else
      canvas.text(text, center - width / 2, mapBottom + kGap + kLabelFontSize,
                  /*vertical=*/false);
  }

  // Axis names and the title.
  double columnLabels = m.verticalColumns ? widestColumn : m.lineHeight;
  double axisY = mapBottom + kGap + columnLabels + kGap + kLabelFontSize;
  canvas.text(
      labels.columnAxis,
      l.mapX + (columns * l.cellSize - canvas.textWidth(labels.columnAxis)) / 2,
      axisY, /*vertical=*/false);
  canvas.text(labels.rowAxis, kMargin + kLabelFontSize,
              l.mapY +
                  (rows * l.cellSize + canvas.textWidth(labels.rowAxis)) / 2,
              /*vertical=*/true);
  canvas.setFont(kTitleFontSize, /*bold=*/true);
  canvas.text(labels.title, kMargin, kMargin + kTitleFontSize,
              /*vertical=*/false);
  return canvas.writePng(path);
}
