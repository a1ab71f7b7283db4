// The run record as JSON, both ways. render_report_json (record.h) writes it: result.json in
// a session's round, `ptxforge run --format json`, the results store's `record` column.
// record_from_json reads it back into a RunRecord, so that what reads records (the session
// reader, the results store) reads typed fields, never JSON keys of its own. Rendering the
// parsed record gives the same text again (record_json_test.cpp holds that).
#pragma once

#include <string_view>

#include "eval/record.h"
#include "util/result.h"

namespace ptxforge::eval {

// Parses the text render_report_json writes. An error, never a guess, for text that is not
// JSON (a truncated file), a missing required key (task, candidate, arch, passed,
// gpu_verified, stages), a value of the wrong type or an unknown name (stage, status,
// severity, guard, failure kind); the message names the key's path ("stages[2].status: ...").
// Keys a record written before they existed lacks keep their defaults: seed (0), check_wall_s,
// and the lists (diagnostics, resources, proofs, flags: empty).
//
// What the JSON does not hold stays as a fresh RunRecord has it: device, each stage's
// model_summary (a parsed record speaks to a person; the model's words are in feedback.md),
// and the resources' arch, barriers, constant bytes and stack sizes. The verdict is computed
// from the stages again, never read. source_text holds only the lines the diagnostics quote,
// each at its own line number and blank elsewhere: result.json keeps no candidate, which the
// session reader reads from its own file.
Result<RunRecord> record_from_json(std::string_view text);

}  // namespace ptxforge::eval
