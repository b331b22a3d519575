//===- HeatmapTest.cpp - Tests of the PNG heatmaps ------------------------===//
//
// The pictures are decoded again with cairo and read pixel by pixel: each
// cell must have exactly the colour of its value on the scale, the colour bar
// must run from the colour of 0 to that of the largest value, and the
// picture must have the size the layout promises.
//
//===----------------------------------------------------------------------===//

#include "tools/support/Heatmap.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cairo.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace mha::runtime;

namespace {

/// A decoded PNG.
class Picture {
public:
  explicit Picture(const std::string &path)
      : surface(cairo_image_surface_create_from_png(path.c_str())) {}
  ~Picture() { cairo_surface_destroy(surface); }

  bool valid() const {
    return cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS;
  }
  int width() const { return cairo_image_surface_get_width(surface); }
  int height() const { return cairo_image_surface_get_height(surface); }

  /// The colour of pixel (x, y) (cairo stores 0xAARRGGBB words).
  Rgb at(int x, int y) const {
    const unsigned char *row = cairo_image_surface_get_data(surface) +
                               y * cairo_image_surface_get_stride(surface);
    uint32_t word;
    std::memcpy(&word, row + 4 * x, sizeof(word));
    return {uint8_t(word >> 16), uint8_t(word >> 8), uint8_t(word)};
  }

private:
  cairo_surface_t *surface;
};

std::ostream &operator<<(std::ostream &os, const Rgb &color) {
  return os << "rgb(" << int(color.red) << ", " << int(color.green) << ", "
            << int(color.blue) << ")";
}

/// Gives each test a fresh directory for its pictures and removes it after.
class HeatmapTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("mha-heatmap-test", directory));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }

  /// `name` in the test's directory.
  std::string temporaryPath(const char *name) {
    llvm::SmallString<128> path(directory);
    llvm::sys::path::append(path, name);
    return path.str().str();
  }

  llvm::SmallString<128> directory;
};

TEST_F(HeatmapTest, ColorScaleIsViridis) {
  EXPECT_EQ(heatmapColor(0.0), (Rgb{68, 1, 84}));
  EXPECT_EQ(heatmapColor(0.5), (Rgb{33, 145, 140}));
  EXPECT_EQ(heatmapColor(1.0), (Rgb{253, 231, 37}));
  // Halfway between the first two anchors, and clamping outside [0, 1].
  EXPECT_EQ(heatmapColor(1.0 / 16), (Rgb{70, 23, 104}));
  EXPECT_EQ(heatmapColor(-3.0), heatmapColor(0.0));
  EXPECT_EQ(heatmapColor(7.0), heatmapColor(1.0));
}

TEST_F(HeatmapTest, CellsHaveTheColorOfTheirValue) {
  // Two rows of a 2x3 map; the largest value (0.8) is the top of the scale.
  const float values[] = {0.8f, 0.2f, 0.0f, 0.4f, 0.4f, 0.2f};
  HeatmapLabels labels;
  labels.title = "head 0";
  std::string path = temporaryPath("map.png");
  ASSERT_FALSE(llvm::errorToBool(writeHeatmapPng(path, values, 2, 3, labels)));

  Picture picture(path);
  ASSERT_TRUE(picture.valid());
  HeatmapLayout layout = layoutHeatmap(2, 3, labels);
  EXPECT_EQ(picture.width(), layout.width);
  EXPECT_EQ(picture.height(), layout.height);
  ASSERT_GT(layout.cellSize, 4);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) {
      SCOPED_TRACE("cell (" + std::to_string(r) + ", " + std::to_string(c) +
                   ")");
      Rgb expected = heatmapColor(values[r * 3 + c] / 0.8);
      int x = layout.mapX + c * layout.cellSize;
      int y = layout.mapY + r * layout.cellSize;
      // The centre and both corners: the whole cell is one colour.
      EXPECT_EQ(picture.at(x + layout.cellSize / 2, y + layout.cellSize / 2),
                expected);
      EXPECT_EQ(picture.at(x, y), expected);
      EXPECT_EQ(picture.at(x + layout.cellSize - 1, y + layout.cellSize - 1),
                expected);
    }
  }
  // The colour bar: the largest value at the top, 0 at the bottom.
  int barMiddle = layout.barX + layout.barWidth / 2;
  EXPECT_EQ(picture.at(barMiddle, layout.barTop), heatmapColor(1.0));
  EXPECT_EQ(picture.at(barMiddle, layout.barBottom - 1), heatmapColor(0.0));
  // The background is white, and the title is drawn in black above the map.
  EXPECT_EQ(picture.at(0, 0), (Rgb{255, 255, 255}));
  bool dark = false;
  for (int y = 0; y < layout.mapY; ++y)
    for (int x = 0; x < layout.width; ++x)
      dark |= picture.at(x, y).red < 100;
  EXPECT_TRUE(dark) << "no text above the map";
}

// NaN and infinities (from a NaN input) are drawn in their own colour; the
// scale is that of the finite values. NaN once indexed the palette with
// int(NaN) and crashed.
TEST_F(HeatmapTest, NonFiniteCellsHaveTheirOwnColor) {
  EXPECT_EQ(heatmapColor(std::nan("")), heatmapColor(0.0));
  const float inf = std::numeric_limits<float>::infinity();
  const float values[] = {std::nanf(""), 0.5f, inf, -inf, 0.25f, 0.0f};
  EXPECT_EQ(countNonFinite(values, 6), 3);
  HeatmapLabels labels;
  std::string path = temporaryPath("nan.png");
  ASSERT_FALSE(llvm::errorToBool(writeHeatmapPng(path, values, 2, 3, labels)));
  Picture picture(path);
  ASSERT_TRUE(picture.valid());
  HeatmapLayout layout = layoutHeatmap(2, 3, labels);
  auto cell = [&](int r, int c) {
    return picture.at(layout.mapX + c * layout.cellSize + layout.cellSize / 2,
                      layout.mapY + r * layout.cellSize + layout.cellSize / 2);
  };
  EXPECT_EQ(cell(0, 0), kNonFiniteColor);
  EXPECT_EQ(cell(0, 1), heatmapColor(1.0));
  EXPECT_EQ(cell(0, 2), kNonFiniteColor);
  EXPECT_EQ(cell(1, 0), kNonFiniteColor);
  EXPECT_EQ(cell(1, 1), heatmapColor(0.5));
  EXPECT_EQ(cell(1, 2), heatmapColor(0.0));
}

TEST_F(HeatmapTest, ZeroMapUsesTheBottomOfTheScale) {
  // A head whose queries may attend nothing: every weight is 0.
  const float values[] = {0, 0, 0, 0};
  std::string path = temporaryPath("zeros.png");
  ASSERT_FALSE(
      llvm::errorToBool(writeHeatmapPng(path, values, 2, 2, HeatmapLabels())));
  Picture picture(path);
  ASSERT_TRUE(picture.valid());
  HeatmapLayout layout = layoutHeatmap(2, 2, HeatmapLabels());
  EXPECT_EQ(picture.at(layout.mapX + 1, layout.mapY + 1), heatmapColor(0.0));
}

TEST_F(HeatmapTest, LongSequencesGetSmallCellsAndSparseLabels) {
  HeatmapLayout layout = layoutHeatmap(512, 512, HeatmapLabels());
  EXPECT_EQ(layout.cellSize, 1);
  EXPECT_GT(layout.rowLabelStep, 10);
  EXPECT_GT(layout.columnLabelStep, 10);
  HeatmapLayout small = layoutHeatmap(9, 9, HeatmapLabels());
  EXPECT_EQ(small.rowLabelStep, 1);
  EXPECT_EQ(small.columnLabelStep, 1);
}

TEST_F(HeatmapTest, WordsNeedOneLabelPerRowAndColumn) {
  const float values[] = {1, 0, 0, 1};
  HeatmapLabels labels;
  labels.rows = {"dog", "ate", "food"};
  std::string path = temporaryPath("words.png");
  llvm::Error error = writeHeatmapPng(path, values, 2, 2, labels);
  EXPECT_EQ(llvm::toString(std::move(error)),
            "cannot draw '" + path + "': 3 row labels for 2 rows");
  EXPECT_FALSE(llvm::sys::fs::exists(path));

  labels.rows = {"dog", "ate"};
  labels.columns = {"dog", "ate"};
  EXPECT_FALSE(llvm::errorToBool(writeHeatmapPng(path, values, 2, 2, labels)));
  EXPECT_TRUE(Picture(path).valid());
}

TEST_F(HeatmapTest, UnwritablePathIsAnError) {
  const float values[] = {1};
  llvm::Error error = writeHeatmapPng("/nonexistent-mha-dir/map.png", values, 1,
                                      1, HeatmapLabels());
  EXPECT_EQ(llvm::toString(std::move(error)),
            "cannot write '/nonexistent-mha-dir/map.png': error while writing "
            "to output stream");
}

} // namespace
