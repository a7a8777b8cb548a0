// The allocator matrix (`harness table`): workloads as rows, allocators as
// columns, one table per kind of figure; each cell the median of a row's
// figure under an allocator over the best allocator's, with its interval.
// Cells follow core/cells.h and are laid out by the run table's code
// (summary_table.h). Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cells.h"
#include "core/metrics.h"
#include "core/record.h"
#include "report/summary_table.h"

namespace mh {

// One allocator's cell of a row.
struct MatrixCell {
  std::string allocator;
  bool ran = false;                    // the workload ran under it (ok or not)
  std::optional<CellFigures> figures;  // in the stored unit; nullopt: no ok run has the figure
  std::optional<RatioFigures> ratio;   // over the best; nullopt when not defined (see zero)
  bool best = false;                   // its median is the best one's
  bool zero = false;                   // no ratio: the best is <= 0 (lower) or this cell is <= 0 (higher)
  std::string text;                    // as shown
};

// A workload's figure against every allocator.
struct MatrixRow {
  std::string workload;
  Headline figure;  // metric, title, stored unit, better
  DisplayUnit unit;
  std::string best_allocator, best_text;  // the best's absolute figure, with its unit
  std::vector<MatrixCell> cells;          // in the matrix's allocator order
};

struct MatrixTable {
  std::string title;
  std::vector<MatrixRow> rows;
};

struct Matrix {
  std::vector<std::string> allocators;  // in order of first appearance in the runs
  std::vector<MatrixTable> tables;
  // Some cell needs that part of the legend.
  bool never = false, zero = false, higher = false, undirected = false;
};

// `metrics` empty: each workload's headline figures that have a direction,
// else (burst-writefile, timer-turns, programs) peak RSS and CPU time, in a
// table per display unit. Otherwise a table per metric named, with a row per
// workload that has it; `declared` gives a workload metric's unit and direction.
Matrix allocator_matrix(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines,
                        const std::vector<std::string>& metrics = {}, const DeclaredMetrics& declared = {});

// "" when every name in `metrics` is a metric some ok run has, else the error
// naming the bad one and the valid ones.
std::string check_matrix_metrics(const std::vector<RunRecord>& runs, const std::vector<std::string>& metrics);

// One table as a block of the run table's code: workload, figure, best, then an
// allocator per column; the best cells strong.
SummaryBlock matrix_block(const Matrix& m, const MatrixTable& t);
// What the cells are: the legend under every format; `item` opens each line.
std::string matrix_notes(const Matrix& m, const char* item);

std::string matrix_text(const Matrix& m, size_t width = 160);
std::string matrix_markdown(const Matrix& m);
// A line per table, row and allocator: figures in the display unit (named in
// the unit column), the ratio and its interval, the cell as shown.
std::string matrix_csv(const Matrix& m);

}  // namespace mh
