// Memory ops: every address resolved through its state space's window to exactly one
// allocation (a buffer, a module variable, the CTA's .shared, the thread's stack, the kernel
// parameters), checked for bounds and alignment; loads of never-written bytes taint their
// register, stores record init bits and, for outputs, the last writer. Atomics run here too:
// a launch with global atomics runs on one host thread, so each is a plain read-modify-write.
// Every .shared and .global access is told to the race detector as one warp-wide event after
// its lanes ran (.local, .param and .const are private or read-only: no other thread can race
// on them).
#include <algorithm>
#include <bit>
#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "emu/alu.h"
#include "emu/interp.h"
#include "emu/lower.h"
#include "emu/race.h"

namespace ptxforge::emu {

namespace {

struct Where {
  uint8_t* data = nullptr;
  uint8_t* init = nullptr;
  Alloc* alloc = nullptr;
  uint64_t offset = 0;
  Space space = Space::generic;  // the space it resolved to
  uint64_t addr = 0;             // global: the generic address; shared: the offset in the CTA's window
};

// One warp-instruction's lanes on .shared and .global, for one call to the race detector each,
// in the Launch's reused vectors (no allocation or zeroing per instruction). An access wider
// than the detector's 16 bytes (a .v4 of 64-bit values) is two entries of the same thread,
// which cannot race with each other.
struct RaceBatch {
  std::vector<RaceLane>& shared;
  std::vector<RaceLane>& global;
  explicit RaceBatch(Launch& L) : shared(L.race_lanes[0]), global(L.race_lanes[1]) {
    shared.clear();
    global.clear();
  }
  void add(const Where& w, uint32_t tid, uint32_t size) {
    if (w.space != Space::shared && w.space != Space::global) return;
    auto& v = w.space == Space::shared ? shared : global;
    for (uint32_t o = 0; o < size; o += 16) v.push_back(RaceLane{tid, w.addr + o});
  }
};

// Tells the detector the batch; false after recording its finding (a race or its limit).
bool report_races(Exec& x, const RaceBatch& b, uint32_t size, bool write, bool atomic, bool reads) {
  RaceAccess a;
  a.bytes = static_cast<uint8_t>(std::min<uint32_t>(size, 16));
  a.write = write;
  a.atomic = atomic;
  a.reads = reads;
  a.order = x.in.sem;
  a.scope = x.in.scope;
  a.pos = {x.in.line, x.in.col};
  for (int sp = 0; sp < 2; ++sp) {
    const std::vector<RaceLane>& v = sp == 0 ? b.shared : b.global;
    if (v.empty()) continue;
    a.space = sp == 0 ? RaceSpace::shared : RaceSpace::global;
    if (auto f = x.L.race->on_access(*x.cta.race, a, std::span<const RaceLane>(v))) {
      x.L.finding = std::move(*f);
      return false;
    }
  }
  return true;
}

const char* space_name(Space s) {
  switch (s) {
    case Space::global: return ".global";
    case Space::shared: return ".shared";
    case Space::local: return ".local";
    case Space::param: return ".param";
    case Space::const_: return ".const";
    default: return "generic";
  }
}

// Whether any of the n bytes is zero (a never-written byte): memchr without the call.
inline bool any_zero(const uint8_t* p, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (!p[i]) return true;
  return false;
}

// Resolves [addr, addr + size) in `space` for `lane`; false after recording a finding.
// `cache` (may be null) holds the global allocation the previous lane hit: the lanes of a warp
// mostly touch one buffer, and allocations never overlap, so a hit is what find would return.
bool resolve(Exec& x, uint32_t lane, Space space, uint64_t addr, uint32_t size, bool write, Where& out,
             Alloc** cache = nullptr) {
  auto oob = [&](std::string msg, std::string buffer, uint64_t off) {
    fail(x, FindingKind::oob, std::move(msg), lane);
    x.L.finding->buffer = std::move(buffer);
    x.L.finding->offset = off;
    return false;
  };
  if (size > 1 && addr % size != 0) {
    fail(x, FindingKind::misaligned,
         fmt::format("{} of {} bytes at address 0x{:x}, which is not a multiple of {}", write ? "write" : "read", size,
                     addr, size),
         lane);
    return false;
  }
  if (space == Space::generic) {
    auto w = window_of(addr);
    if (!w) {
      if (addr >= kFuncBase) return oob(fmt::format("access through a function address 0x{:x}", addr), "", 0);
      Finding f;
      x.L.global->describe_miss(addr, size, write, f);
      return oob(f.message + " (not a valid generic address)", f.buffer, f.offset);
    }
    space = *w;
    if (space != Space::global && space != Space::const_) addr -= window_base(space);
  } else if (space == Space::const_) {
    addr += kConstWin;
  }
  switch (space) {
    case Space::global: case Space::const_: {
      AllocMap* map = space == Space::global ? x.L.global : x.L.consts;
      Alloc* a = nullptr;
      if (cache && space == Space::global) {
        Alloc* c = *cache;
        if (c && addr - c->base < c->size && size <= c->size - (addr - c->base)) a = c;
        else if ((a = map->find(addr, size))) *cache = a;
      } else {
        a = map->find(addr, size);
      }
      if (!a) {
        Finding f;
        map->describe_miss(addr, size, write, f);
        return oob(f.message, f.buffer, f.offset);
      }
      if (write && a->read_only) {
        fail(x, FindingKind::trap, fmt::format("a store to read-only '{}'", a->name), lane);
        return false;
      }
      out.alloc = a;
      out.space = space;
      out.addr = addr;
      out.offset = addr - a->base;
      out.data = a->bytes.data() + out.offset;
      out.init = a->init.data() + out.offset;
      return true;
    }
    case Space::shared: {
      uint64_t n = x.cta.shared.size();
      if (addr >= n || size > n - addr)
        return oob(access_text(write, size, addr, "shared memory", n), "shared memory", addr);
      out.data = x.cta.shared.data() + addr;
      out.init = x.cta.shared_init.data() + addr;
      out.offset = addr;
      out.space = Space::shared;
      out.addr = addr;
      return true;
    }
    case Space::param:
      if (addr < kFrameParamBit) {
        uint64_t n = x.L.params.size();
        if (write) {
          fail(x, FindingKind::trap, "a store to a kernel parameter", lane);
          return false;
        }
        if (addr >= n || size > n - addr)
          return oob(access_text(write, size, addr, "kernel parameters", n), "kernel parameters", addr);
        out.data = x.L.params.data() + addr;
        out.init = nullptr;
        out.offset = addr;
        return true;
      }
      addr -= kFrameParamBit;
      [[fallthrough]];
    case Space::local: {
      // The thread's stack up to the end of the lane's innermost frame.
      const Frame& fr = x.w.frames[static_cast<size_t>(x.w.frame[lane])];
      uint64_t end = fr.stack_off + x.L.prog->fns[fr.fn].frame_bytes;
      if (addr >= end || size > end - addr)
        return oob(access_text(write, size, addr, "local memory", end), "local memory", addr);
      ThreadStack& st = x.cta.stacks[x.tid(lane)];
      if (!st.reserve(end)) {
        fail(x, FindingKind::limit, "a thread's .local memory exceeds the CPU engine's limit", lane);
        return false;
      }
      out.data = st.bytes.data() + addr;
      out.init = st.init.data() + addr;
      out.offset = addr;
      return true;
    }
    default: break;
  }
  fail(x, FindingKind::oob, fmt::format("an access in {}", space_name(space)), lane);
  return false;
}

// A launch on several host threads (emu/cta_pool.h) records which CTA touched each global
// granule before the bytes are touched; another CTA's write there, or a write to what another
// CTA read, stops the parallel run, which then runs again on one thread.
bool claim(Exec& x, const Where& w, uint32_t lane, uint32_t size, bool write) {
  if (!w.alloc || !w.alloc->owners || w.space != Space::global) return true;
  if (w.alloc->claim(w.offset, size, write, x.cta.linear)) return true;
  fail(x, FindingKind::race, "a global access conflicting with another CTA's (the parallel run stops here)", lane);
  return false;
}

uint64_t lane_address(Exec& x, uint32_t lane) {
  return read_operand(x, x.in.addr_base, lane, 64) + static_cast<uint64_t>(x.in.addr_off);
}

bool check_address_taint(Exec& x) {
  uint32_t t = taint_of(x, x.in.addr_base) & x.mask;
  if (!t) return true;
  fail(x, FindingKind::uninit,
       "a value read from never-written memory or a never-written register" + origin(x.w) + " forms an address",
       static_cast<uint32_t>(std::countr_zero(t)));
  return false;
}

void record_write(Exec& x, Where& w, uint32_t lane, uint32_t bytes, bool tainted) {
  if (w.init) std::memset(w.init, tainted ? 0 : 1, bytes);
  if (x.L.track_nc && w.alloc && w.space == Space::global) {
    Alloc& a = *w.alloc;
    if (a.written_launch != x.L.gridid) {
      a.written.assign(a.bytes.size(), 0);
      a.written_launch = x.L.gridid;
    }
    std::memset(a.written.data() + w.offset, 1, bytes);
  }
  if (w.alloc && !w.alloc->writers.empty()) {
    uint32_t eb = w.alloc->element_bytes;
    for (uint64_t e = w.offset / eb; e <= (w.offset + bytes - 1) / eb && e < w.alloc->writers.size(); ++e)
      w.alloc->writers[e] = WriterRec{x.who(lane), x.in.line, x.in.col, true};
  }
}

Flow ld_st(Exec& x) {
  const Inst& in = x.in;
  if (!check_address_taint(x)) return Flow::stop;
  int bits = dt_bits(in.type);
  uint32_t eb = static_cast<uint32_t>(bits / 8);
  uint32_t size = eb * in.vec;
  bool store = in.op == Op::st;
  uint32_t tainted = 0;
  if (store) {
    for (int i = 0; i < in.vec; ++i) tainted |= taint_of(x, in.o[i]);
    tainted &= x.mask;
  }
  uint32_t load_taint = 0;
  bool races = x.L.race && x.cta.race;
  bool sign_fill = dt_signed(in.type) && bits < 64;
  Alloc* cache = nullptr;
  RaceBatch batch(x.L);
  for (uint32_t m = x.mask; m; m &= m - 1) {
    uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
    Where w;
    if (!resolve(x, l, in.space, lane_address(x, l), size, store, w, &cache)) return Flow::stop;
    if (!claim(x, w, l, size, store)) return Flow::stop;
    if (races) batch.add(w, x.tid(l), size);
    // The manual leaves ld.global.nc outside the memory model: reading bytes this launch wrote
    // may return stale data on a GPU, whatever orders the write before it.
    if (in.nc && !store && w.alloc && w.alloc->written_launch == x.L.gridid && x.L.track_nc &&
        std::memchr(w.alloc->written.data() + w.offset, 1, size)) {
      fail(x, FindingKind::race,
           fmt::format("ld.global.nc reads bytes written in this launch (non-coherent loads are outside the "
                       "memory model) [emu-nc-after-write]: {} bytes at offset {} of '{}'",
                       size, w.offset, w.alloc->name),
           l);
      x.L.finding->buffer = w.alloc->name;
      x.L.finding->offset = w.offset;
      return Flow::stop;
    }
    if (store) {
      bool t = (tainted >> l) & 1;
      if (t && w.alloc && w.alloc->output) {
        fail(x, FindingKind::uninit,
             "a value read from never-written memory or a never-written register" + origin(x.w) +
                 " is stored to output '" + w.alloc->name + "'",
             l);
        x.L.finding->buffer = w.alloc->name;
        x.L.finding->offset = w.offset;
        return Flow::stop;
      }
      for (int i = 0; i < in.vec; ++i) {
        uint64_t v = read_operand(x, in.o[i], l, bits);
        std::memcpy(w.data + i * eb, &v, eb);
      }
      record_write(x, w, l, size, t);
    } else {
      if (w.init && any_zero(w.init, size)) {
        load_taint |= 1u << l;
        x.w.taint_line = in.line;
        x.w.taint_col = in.col;
      }
      for (int i = 0; i < in.vec; ++i) {
        uint64_t v = 0;
        std::memcpy(&v, w.data + i * eb, eb);
        if (sign_fill) {  // a signed load fills a wider register with its sign
          uint64_t s = uint64_t{1} << (bits - 1);
          v = (v ^ s) - s;
          write_reg(x, in.o[i], l, v, 64);
        } else {
          write_reg(x, in.o[i], l, v, bits);
        }
      }
    }
  }
  if (!store)
    for (int i = 0; i < in.vec; ++i) set_taint(x, in.o[i], load_taint);
  if (races && !report_races(x, batch, size, store, false, !store)) return Flow::stop;
  return Flow::next;
}

uint64_t atom_apply(AtomOp op, DT t, uint64_t old, uint64_t b, uint64_t c, int bits) {
  bool sg = dt_signed(t);
  auto sx = [&](uint64_t v) {
    uint64_t s = uint64_t{1} << (bits - 1);
    return static_cast<int64_t>(bits >= 64 ? v : ((v ^ s) - s));
  };
  switch (op) {
    case AtomOp::add:
      if (t == DT::f32) return alu::add_f32(static_cast<uint32_t>(old), static_cast<uint32_t>(b), {});
      if (t == DT::f64) return alu::add_f64(old, b, alu::Round::rn);
      return old + b;
    case AtomOp::min: return (sg ? sx(b) < sx(old) : b < old) ? b : old;
    case AtomOp::max: return (sg ? sx(b) > sx(old) : b > old) ? b : old;
    case AtomOp::inc: return old >= b ? 0 : old + 1;
    case AtomOp::dec: return (old == 0 || old > b) ? b : old - 1;
    case AtomOp::and_: return old & b;
    case AtomOp::or_: return old | b;
    case AtomOp::xor_: return old ^ b;
    case AtomOp::exch: return b;
    case AtomOp::cas: return old == b ? c : old;
  }
  return old;
}

Flow atomic(Exec& x) {
  const Inst& in = x.in;
  if (!check_address_taint(x)) return Flow::stop;
  int bits = dt_bits(in.type);
  uint32_t size = static_cast<uint32_t>(bits / 8);
  if (in.space == Space::generic || in.space == Space::global || in.space == Space::shared) {
  }
  uint32_t tainted = (taint_of(x, in.o[1]) | (in.n > 2 ? taint_of(x, in.o[2]) : 0)) & x.mask;
  uint32_t result_taint = 0;
  bool races = x.L.race && x.cta.race;
  RaceBatch batch(x.L);
  // Lanes in order: the engine's order of the warp's atomics is lane order.
  for (uint32_t m = x.mask; m; m &= m - 1) {
    uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
    Where w;
    if (!resolve(x, l, in.space, lane_address(x, l), size, true, w)) return Flow::stop;
    if (!claim(x, w, l, size, true)) return Flow::stop;
    if (races) batch.add(w, x.tid(l), size);
    uint64_t old = 0;
    std::memcpy(&old, w.data, size);
    bool old_tainted = w.init && std::memchr(w.init, 0, size);
    uint64_t b = read_operand(x, in.o[1], l, bits), c = in.n > 2 ? read_operand(x, in.o[2], l, bits) : 0;
    uint64_t r = atom_apply(static_cast<AtomOp>(in.sub), in.type, old, b, c, bits);
    bool t = old_tainted || ((tainted >> l) & 1);
    if (t && w.alloc && w.alloc->output) {
      fail(x, FindingKind::uninit,
           fmt::format("an atomic on never-written bytes of output '{}' (its value is undefined)", w.alloc->name), l);
      return Flow::stop;
    }
    std::memcpy(w.data, &r, size);
    record_write(x, w, l, size, t);
    if (old_tainted) result_taint |= 1u << l;
    write_reg(x, in.o[0], l, old, bits);
  }
  set_taint(x, in.o[0], result_taint);
  // atom reads and writes; red writes only (no acquire, no read record).
  if (races && !report_races(x, batch, size, true, true, in.op == Op::atom)) return Flow::stop;
  return Flow::next;
}

}  // namespace

Flow exec_memory(Exec& x) {
  const Inst& in = x.in;
  switch (in.op) {
    case Op::ld: case Op::st: return ld_st(x);
    case Op::atom: case Op::red: return atomic(x);
    case Op::cvta_to: case Op::cvta_from: {
      int bits = dt_bits(in.type);
      uint64_t base = window_base(in.space);
      set_taint(x, in.o[0], taint_of(x, in.o[1]));
      for (uint32_t m = x.mask; m; m &= m - 1) {
        uint32_t l = static_cast<uint32_t>(std::countr_zero(m));
        uint64_t a = read_operand(x, in.o[1], l, bits);
        // A .param::func address (a frame's) lives in the local window when made generic.
        uint64_t b = base;
        if (in.space == Space::param && (in.op == Op::cvta_from ? a >= kFrameParamBit : a >= kLocalWin))
          b = in.op == Op::cvta_from ? kLocalWin - kFrameParamBit : kLocalWin - kFrameParamBit;
        write_reg(x, in.o[0], l, in.op == Op::cvta_to ? a - b : a + b, bits);
      }
      return Flow::next;
    }
    default: return Flow::next;
  }
}

}  // namespace ptxforge::emu
