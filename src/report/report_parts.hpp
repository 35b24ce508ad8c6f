// The reports that grow with the number of spans (profile.json and trace.json hold one entry
// per span of the timeline: 100,000 region calls of a program), made in parts and handed to a
// sink as they are made. write_profile_outputs writes them to their files this way, so that
// writing a report never holds the whole text, nor a JSON document of every span, at once
// (docs/regions.md, "What is written"); profile_to_json and chrome_trace collect the same parts.
#pragma once

#include "common/atomic_file.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/report.hpp"

namespace hwprof::report {

void chrome_trace_parts(const Profile& profile, const TextSink& sink);
void profile_json_parts(const Profile& profile, ProfileGrouping by, int depth, const TextSink& sink);

}  // namespace hwprof::report
