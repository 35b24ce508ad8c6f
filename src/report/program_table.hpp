// A program run's table (a regions program, a PyTorch program under hwprof::torch): its rows
// per step (or over the run) with their calls and the median call, their share of the
// program's time, rates that are lower bounds or impossible marked as such, the rows left out,
// the shapes of its op rows, and the legend (docs/torch.md, "Reading a torch profile").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"
#include "report/text_table.hpp"

namespace hwprof::report {

// The first `shown` of `rows` and the program total, with its title line; `marks` gets what
// the rows were marked with.
std::string program_rows_table(const Profile& profile, const std::vector<const LayerProfile*>& rows, std::size_t shown, ProfileSort sort,
                               RowMarks& marks);
// The rows past `shown`: how many, and the largest share among them (rows nest: their shares
// are not summed).
std::string program_rows_left_out(const Profile& profile, const std::vector<const LayerProfile*>& rows, std::size_t shown);
// The shown op rows' calls by input shapes, most time first: the top three of each, the rest
// summed.
std::string program_shapes(const std::vector<const LayerProfile*>& shown);
std::string program_legend(const Profile& profile);

}  // namespace hwprof::report
