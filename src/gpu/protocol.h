// The worker protocol: one JSON object per line in each direction. The parent sends a Job,
// the worker answers with an Outcome. The same JSON forms of the measurements appear in
// `ptxforge run --json` reports (eval/report.cpp uses them).
#pragma once

#include <string>
#include <string_view>

#include "gpu/job.h"
#include "util/result.h"

namespace ptxforge::gpu {

std::string encode_job(const Job& job);
Result<Job> decode_job(std::string_view line);
std::string encode_outcome(const Outcome& o);
Result<Outcome> decode_outcome(std::string_view line);

}  // namespace ptxforge::gpu
