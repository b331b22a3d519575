//===- Heatmap.h - Draw a matrix as a labelled PNG heatmap ------*- C++ -*-===//
//
// Pictures of attention weights for people: one cell per (query, key), a
// colour bar with values, axes labelled with positions or words, a title.
// Drawing, text and PNG encoding are cairo's.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_SUPPORT_HEATMAP_H
#define MHA_TOOLS_SUPPORT_HEATMAP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// The words around a heatmap.
struct HeatmapLabels {
  /// The line above the map.
  std::string title;
  /// The names of the two axes.
  std::string rowAxis = "query", columnAxis = "key";
  /// One label per row and per column; empty: the positions 0, 1, ...
  std::vector<std::string> rows, columns;
};

/// Where the parts of a heatmap lie in its picture, in pixels.
struct HeatmapLayout {
  /// The size of the picture.
  int width = 0, height = 0;
  /// The top-left corner of cell (0, 0) and the side of every cell.
  int mapX = 0, mapY = 0, cellSize = 0;
  /// The colour bar: its top (the largest value) and bottom (0) edges.
  int barX = 0, barTop = 0, barWidth = 0, barBottom = 0;
  /// Every `labelStep`-th row and column is labelled, so labels never overlap.
  int64_t rowLabelStep = 1, columnLabelStep = 1;
};

/// An 8-bit RGB colour.
struct Rgb {
  uint8_t red = 0, green = 0, blue = 0;
  /// The same colour, channel by channel.
  bool operator==(const Rgb &other) const {
    return red == other.red && green == other.green && blue == other.blue;
  }
};

/// The colour of `fraction` (clamped to [0, 1]; NaN counts as 0) of the
/// scale: viridis, dark blue for 0 to yellow for 1, readable in grey and by
/// colour-blind readers.
Rgb heatmapColor(double fraction);

/// The colour of a cell whose value is NaN or infinite: a red that viridis
/// never reaches, so that a broken weight stands out instead of taking the
/// colour of some value.
constexpr Rgb kNonFiniteColor = {228, 26, 28};

/// Returns how many of the `count` values are NaN or infinite.
int64_t countNonFinite(const float *values, int64_t count);

/// The layout `writeHeatmapPng` uses for a `rows` x `columns` map with
/// `labels`.
HeatmapLayout layoutHeatmap(int64_t rows, int64_t columns,
                            const HeatmapLabels &labels);

/// Draws `values` (`rows` x `columns`, C order, meant to be >= 0) as a PNG
/// at `path`: cell (r, c) has the colour of values[r][c] / max, where max is
/// the largest finite value (the top of the colour bar, whose ticks give the
/// values); a NaN or infinite cell has kNonFiniteColor.
/// Label counts other than 0 or rows / columns, or a write that fails, are
/// errors naming the path.
llvm::Error writeHeatmapPng(llvm::StringRef path, const float *values,
                            int64_t rows, int64_t columns,
                            const HeatmapLabels &labels);

} // namespace runtime
} // namespace mha

#endif // MHA_TOOLS_SUPPORT_HEATMAP_H
