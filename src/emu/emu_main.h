// The CPU engine's process entry point: the only way into src/emu/ from outside it (the hidden
// `ptxforge emu-worker` subcommand, tools/ptxforge/cmd_emu_worker.cpp). The parent talks to it
// through gpu::WorkerClient on gpu::emu_worker_argv(), with the GPU worker's protocol.
#pragma once

namespace ptxforge::emu {

// Reads jobs as JSON lines on stdin and answers each on stdout (gpu/protocol.h), until stdin
// closes. Exits on its own when the parent dies.
int emu_worker_main();

}  // namespace ptxforge::emu
