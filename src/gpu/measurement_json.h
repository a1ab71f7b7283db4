// JSON forms of the measurements (nlohmann); included only by .cpp files.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/measurement.h"
#include "task/launch_spec.h"

namespace ptxforge::task {
void to_json(nlohmann::json& j, const Mismatch& m);
void from_json(const nlohmann::json& j, Mismatch& m);
void to_json(nlohmann::json& j, const Comparison& c);
void from_json(const nlohmann::json& j, Comparison& c);
void to_json(nlohmann::json& j, const LaunchSpec& s);
void from_json(const nlohmann::json& j, LaunchSpec& s);
}  // namespace ptxforge::task

namespace ptxforge::gpu {
void to_json(nlohmann::json& j, const EmuThread& t);
void from_json(const nlohmann::json& j, EmuThread& t);
void to_json(nlohmann::json& j, const EmuFinding& f);
void from_json(const nlohmann::json& j, EmuFinding& f);
void to_json(nlohmann::json& j, const WrongElement& w);
void from_json(const nlohmann::json& j, WrongElement& w);
void to_json(nlohmann::json& j, const InstructionCount& c);
void from_json(const nlohmann::json& j, InstructionCount& c);
void to_json(nlohmann::json& j, const Failure& f);
void from_json(const nlohmann::json& j, Failure& f);
void to_json(nlohmann::json& j, const DeviceInfo& d);
void from_json(const nlohmann::json& j, DeviceInfo& d);
void to_json(nlohmann::json& j, const CaseResult& c);
void from_json(const nlohmann::json& j, CaseResult& c);
void to_json(nlohmann::json& j, const TimingStats& t);
void from_json(const nlohmann::json& j, TimingStats& t);
void to_json(nlohmann::json& j, const TrialCheck& c);
void from_json(const nlohmann::json& j, TrialCheck& c);
void to_json(nlohmann::json& j, const SizeTiming& t);
void from_json(const nlohmann::json& j, SizeTiming& t);
void to_json(nlohmann::json& j, const VerifyReport& r);
void from_json(const nlohmann::json& j, VerifyReport& r);
void to_json(nlohmann::json& j, const TimeReport& r);
void from_json(const nlohmann::json& j, TimeReport& r);
}  // namespace ptxforge::gpu
