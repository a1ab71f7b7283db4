// The golden recording's files and the check (golden_check.h). The engine runs each family's
// generator kernel once over every recorded instance of that family, exactly as the GPU did.
#include "emu/golden_check.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "emu/engine.h"
#include "ptx/front_end.h"

namespace ptxforge::emu {
namespace {

constexpr char kMagic[8] = {'P', 'T', 'X', 'F', 'G', 'O', 'L', 'D'};
constexpr uint32_t kFormat = 1;

const char* type_name(GoldenType t) {
  static const char* names[] = {"pred", "b16", "b32", "b64", "u8",  "u16", "u32",   "u64",   "s8",
                                "s16",  "s32", "s64", "f16", "bf16", "f32", "f64", "f16x2", "bf16x2"};
  return names[static_cast<int>(t)];
}

uint8_t bytes_of(int bits) { return static_cast<uint8_t>(bits <= 8 ? 1 : bits / 8); }

// A little-endian byte reader that fails instead of reading past the end.
struct Reader {
  const std::string& s;
  size_t at = 0;
  bool ok = true;
  uint64_t get(size_t n) {
    if (!ok || n > 8 || s.size() - at < n) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
    at += n;
    return v;
  }
};

void put(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

Result<std::string> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return Error{"cannot read " + p.string()};
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Error bad(const std::filesystem::path& p, const std::string& why) { return Error{p.string() + ": " + why}; }

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

}  // namespace

size_t GoldenRecording::instance_count() const {
  size_t n = 0;
  for (const auto& f : forms) n += f.instances.size();
  return n;
}

std::string golden_types_text(const GoldenForm& f) {
  std::string s = std::string(type_name(f.result)) + " <-";
  for (GoldenType t : f.inputs) s += std::string(" ") + type_name(t);
  return s;
}

std::string golden_form_hash(const GoldenForm& f) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (char c : f.ptx + "\n" + golden_types_text(f)) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

std::string golden_table_hash() {
  std::string all;
  for (const GoldenForm& f : golden_forms()) all += golden_form_hash(f);
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : all) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

GoldenRecording golden_recording_template() {
  GoldenRecording rec;
  rec.table_hash = golden_table_hash();
  rec.skipped = golden_plan().skipped;
  const auto& forms = golden_forms();
  for (const GoldenFamily& fam : golden_plan().families) {
    for (uint32_t id : fam.forms) {
      const GoldenForm& f = forms[id];
      GoldenRecordedForm r;
      r.form = id;
      r.hash = golden_form_hash(f);
      r.ptx = f.ptx;
      for (GoldenType t : f.inputs) r.in_bytes.push_back(bytes_of(golden_type_bits(t)));
      r.out_bytes = bytes_of(golden_register_bits(f.result));
      r.instances = golden_instances(id);
      r.outputs.assign(r.instances.size(), 0);
      rec.forms.push_back(std::move(r));
    }
  }
  std::sort(rec.forms.begin(), rec.forms.end(), [](const auto& a, const auto& b) { return a.form < b.form; });
  return rec;
}

Result<GoldenRecording> read_golden_recording(const std::filesystem::path& dir) {
  const auto vpath = dir / kGoldenVectors, jpath = dir / kGoldenForms;
  auto bin = slurp(vpath);
  if (!bin) return bin.error();
  auto js = slurp(jpath);
  if (!js) return js.error();
  GoldenRecording rec;
  std::map<uint32_t, std::pair<std::string, std::string>> meta;  // id -> hash, ptx
  try {
    auto j = nlohmann::json::parse(*js);
    if (j.value("format", 0) != static_cast<int>(kFormat)) return bad(jpath, "unknown format (expected 1)");
    rec.table_hash = j.value("table_hash", "");
    rec.gpu = j.value("gpu", "");
    rec.cc = j.value("cc", "");
    rec.driver = j.value("driver", "");
    rec.cuda = j.value("cuda", "");
    rec.date = j.value("date", "");
    rec.seconds = j.value("seconds", 0.0);
    for (const auto& f : j.at("forms")) meta[f.at("id").get<uint32_t>()] = {f.at("hash").get<std::string>(), f.value("ptx", "")};
    if (j.contains("skipped")) {
      for (const auto& s : j["skipped"]) rec.skipped.push_back({s.at("id").get<uint32_t>(), s.value("why", "")});
    }
  } catch (const nlohmann::json::exception& e) {
    return bad(jpath, std::string("not a golden recording: ") + e.what());
  }
  Reader r{*bin};
  if (bin->size() < 16 || std::memcmp(bin->data(), kMagic, 8) != 0) return bad(vpath, "not a golden vectors file (no PTXFGOLD magic)");
  r.at = 8;
  if (r.get(4) != kFormat) return bad(vpath, "unknown format (expected 1)");
  const uint64_t blocks = r.get(4);
  for (uint64_t b = 0; b < blocks && r.ok; ++b) {
    GoldenRecordedForm f;
    f.form = static_cast<uint32_t>(r.get(4));
    const uint64_t count = r.get(4);
    const uint64_t k = r.get(1);
    if (k > 4) return bad(vpath, fmt::format("form {} has {} inputs (at most 4)", f.form, k));
    for (uint64_t i = 0; i < k; ++i) f.in_bytes.push_back(static_cast<uint8_t>(r.get(1)));
    f.out_bytes = static_cast<uint8_t>(r.get(1));
    size_t per = f.out_bytes;
    for (uint8_t w : f.in_bytes) per += w;
    for (uint8_t w : f.in_bytes) if (w == 0 || w > 8) r.ok = false;
    if (f.out_bytes == 0 || f.out_bytes > 8) r.ok = false;
    if (!r.ok || per * count > bin->size() - r.at) return bad(vpath, fmt::format("form block {} is truncated or malformed", b));
    auto it = meta.find(f.form);
    if (it == meta.end()) return bad(jpath, fmt::format("form {} is in vectors.bin but not in forms.json", f.form));
    f.hash = it->second.first;
    f.ptx = it->second.second;
    f.instances.resize(count);
    f.outputs.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      f.instances[i].form = f.form;
      for (uint64_t q = 0; q < k; ++q) f.instances[i].in[q] = r.get(f.in_bytes[q]);
      f.outputs[i] = r.get(f.out_bytes);
    }
    rec.forms.push_back(std::move(f));
  }
  if (!r.ok) return bad(vpath, "truncated");
  if (r.at != bin->size()) return bad(vpath, "trailing bytes after the last form block");
  return rec;
}

Result<Unit> write_golden_recording(const std::filesystem::path& dir, const GoldenRecording& rec) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string bin(kMagic, 8);
  put(bin, kFormat, 4);
  put(bin, rec.forms.size(), 4);
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["table_hash"] = rec.table_hash;
  j["gpu"] = rec.gpu;
  j["cc"] = rec.cc;
  j["driver"] = rec.driver;
  j["cuda"] = rec.cuda;
  j["date"] = rec.date;
  j["seconds"] = rec.seconds;
  j["forms"] = nlohmann::ordered_json::array();
  const auto& table = golden_forms();
  for (const auto& f : rec.forms) {
    put(bin, f.form, 4);
    put(bin, f.instances.size(), 4);
    put(bin, f.in_bytes.size(), 1);
    for (uint8_t w : f.in_bytes) put(bin, w, 1);
    put(bin, f.out_bytes, 1);
    for (size_t i = 0; i < f.instances.size(); ++i) {
      for (size_t q = 0; q < f.in_bytes.size(); ++q) put(bin, f.instances[i].in[q], f.in_bytes[q]);
      put(bin, i < f.outputs.size() ? f.outputs[i] : 0, f.out_bytes);
    }
    nlohmann::ordered_json e;
    e["id"] = f.form;
    e["family"] = f.form < table.size() ? table[f.form].family : "";
    e["ptx"] = f.ptx;
    e["types"] = f.form < table.size() ? golden_types_text(table[f.form]) : "";
    e["hash"] = f.hash;
    j["forms"].push_back(std::move(e));
  }
  j["skipped"] = nlohmann::ordered_json::array();
  for (const auto& s : rec.skipped) j["skipped"].push_back({{"id", s.form}, {"why", s.why}});
  std::ofstream vb(dir / kGoldenVectors, std::ios::binary | std::ios::trunc);
  vb << bin;
  std::ofstream fj(dir / kGoldenForms, std::ios::trunc);
  fj << j.dump(1) << "\n";
  if (!vb || !fj) return Error{"cannot write the golden recording to " + dir.string()};
  return Unit{};
}

namespace {

// One family's instances on the engine: the generator kernel, one launch. Returns the out
// slots, or why the engine could not run it.
Result<std::vector<uint64_t>> run_on_engine(const GoldenFamily& fam, std::span<const GoldenInstance> inst) {
  if (inst.empty()) return std::vector<uint64_t>{};
  auto checked = ptx::check_source(golden_module(fam));
  if (!checked.ok()) return Error{"the generator kernel of " + fam.name + " does not pass the checker"};
  auto made = Machine::create(checked.module);
  if (auto* f = std::get_if<Finding>(&made)) {
    return Error{fmt::format("{}: the engine cannot run its kernel: {} (line {})", fam.name, f->message, f->pos.line)};
  }
  auto& m = *std::get<std::unique_ptr<Machine>>(made);
  const auto slots = golden_input_slots(fam, inst);
  const uint64_t in = m.alloc("in", slots.size() * 8, Init::written);
  m.write(in, {reinterpret_cast<const uint8_t*>(slots.data()), slots.size() * 8});
  const uint64_t out = m.alloc("out", inst.size() * 8, Init::unwritten);
  const uint32_t n = static_cast<uint32_t>(inst.size());
  std::vector<ParamBytes> params(3);
  params[0].resize(8), params[1].resize(8), params[2].resize(4);
  std::memcpy(params[0].data(), &in, 8);
  std::memcpy(params[1].data(), &out, 8);
  std::memcpy(params[2].data(), &n, 4);
  LaunchConfig cfg;
  cfg.grid = {(n + kGoldenBlock - 1) / kGoldenBlock, 1, 1};
  cfg.block = {kGoldenBlock, 1, 1};
  auto r = m.launch(fam.entry, cfg, params);
  if (!r.ok()) {
    return Error{fmt::format("{}: the engine stopped at line {}: {} [emu-{}]", fam.name, r.finding->pos.line,
                             r.finding->message, to_string(r.finding->kind))};
  }
  auto bytes = m.read(out, inst.size() * 8);
  std::vector<uint64_t> v(inst.size());
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

std::string inputs_text(const GoldenForm& f, const GoldenInstance& in) {
  std::string s;
  for (size_t k = 0; k < f.inputs.size(); ++k) s += (k ? ", " : "") + hex(in.in[k]);
  return s;
}

}  // namespace

GoldenCheckReport check_golden(const GoldenRecording& rec, const GoldenCheckOptions& opts) {
  GoldenCheckReport rep;
  const auto& table = golden_forms();
  const auto& plan = golden_plan();
  std::map<uint32_t, const GoldenRecordedForm*> usable;
  for (const auto& r : rec.forms) {
    if (r.form >= table.size()) {
      rep.stale.push_back(fmt::format("form {} ('{}') is not in the form table", r.form, r.ptx));
    } else if (r.hash != golden_form_hash(table[r.form])) {
      rep.stale.push_back(fmt::format("form {}: recorded as '{}', the table now has '{}' ({}): forms are append-only",
                                      r.form, r.ptx, table[r.form].ptx, golden_types_text(table[r.form])));
    } else if (r.outputs.size() != r.instances.size()) {
      rep.stale.push_back(fmt::format("form {}: {} outputs for {} instances", r.form, r.outputs.size(), r.instances.size()));
    } else {
      usable[r.form] = &r;
    }
  }
  std::set<uint32_t> left_out;
  for (const auto& s : plan.skipped) left_out.insert(s.form);
  for (uint32_t id = 0; id < table.size(); ++id) {
    if (!usable.count(id) && !left_out.count(id)) rep.not_recorded.push_back(id);
  }
  rep.left_out = plan.skipped.size();
  auto mismatch = [&](uint32_t id, const GoldenInstance& in, uint64_t gpu, const std::string& what) {
    ++rep.mismatches;
    ++rep.per_form[id];
    if (rep.shown.size() < opts.show) {
      rep.shown.push_back(fmt::format("form {} '{}' inputs [{}]: gpu {}, {}", id, table[id].ptx, inputs_text(table[id], in),
                                      hex(gpu), what));
    }
  };
  for (const GoldenFamily& fam : plan.families) {
    std::vector<GoldenInstance> inst;
    std::vector<uint64_t> gpu;
    for (uint32_t id : fam.forms) {
      auto it = usable.find(id);
      if (it == usable.end()) continue;
      ++rep.forms_compared;
      inst.insert(inst.end(), it->second->instances.begin(), it->second->instances.end());
      gpu.insert(gpu.end(), it->second->outputs.begin(), it->second->outputs.end());
    }
    if (inst.empty()) continue;
    rep.instances += inst.size();
    std::vector<uint64_t> engine;
    if (opts.run_engine) {
      auto r = run_on_engine(fam, inst);
      if (!r) {
        rep.engine_errors.push_back(r.error().message);
      } else {
        engine = std::move(*r);
      }
    }
    for (size_t i = 0; i < inst.size(); ++i) {
      const GoldenForm& f = table[inst[i].form];
      const std::span<const uint64_t> in(inst[i].in.data(), f.inputs.size());
      const uint64_t reg_mask = golden_mask(opts.engine_register_bits ? golden_register_bits(f.result) : golden_type_bits(f.result));
      const uint64_t type_mask = golden_mask(golden_type_bits(f.result));
      std::string what;
      if (opts.run_alu) {
        const uint64_t alu = f.eval(in);
        if (!golden_agrees(f, in, gpu[i], alu, type_mask)) what += "alu " + hex(alu & type_mask) + " differs";
      }
      if (!engine.empty()) {
        const uint64_t e = engine[i] & reg_mask;
        const bool agrees = golden_agrees(f, in, gpu[i], e, reg_mask);
        if (!agrees || !golden_near_truth(f, in, e)) {
          what += std::string(what.empty() ? "" : "; ") + "engine " + hex(e) +
                  (agrees ? " is outside the bound of the true value" : (engine[i] == kGoldenNoForm ? " (no form ran)" : " differs"));
        }
      }
      if (!what.empty()) mismatch(inst[i].form, inst[i], gpu[i], what);
    }
  }
  return rep;
}

std::string GoldenCheckReport::text() const {
  std::string s = fmt::format("golden vectors: {} forms, {} instances compared, {} mismatches\n", forms_compared, instances,
                              mismatches);
  for (const auto& x : stale) s += "stale: " + x + "\n";
  for (const auto& x : engine_errors) s += "engine: " + x + "\n";
  for (const auto& x : shown) s += "  " + x + "\n";
  if (!per_form.empty()) {
    s += "mismatches per form:\n";
    const auto& table = golden_forms();
    for (auto [id, n] : per_form) s += fmt::format("  {:4} {:<48} {}\n", id, id < table.size() ? table[id].ptx : "?", n);
  }
  if (left_out) s += fmt::format("{} forms left out: they cannot run on {} (golden_plan().skipped)\n", left_out, kGoldenTarget);
  if (!not_recorded.empty()) {
    s += fmt::format("{} forms not yet recorded:", not_recorded.size());
    for (uint32_t id : not_recorded) s += fmt::format(" {}", id);
    s += "\n";
  }
  return s;
}

}  // namespace ptxforge::emu
