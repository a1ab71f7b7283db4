// The worker process's entry point: the only way into src/worker/ from outside it (the hidden
// `ptxforge worker` subcommand, tools/ptxforge/cmd_worker.cpp). The parent talks to it through
// gpu/worker_client.h and the contract in gpu/job.h.
#pragma once

namespace ptxforge::gpu {

// The worker's main loop (the hidden `ptxforge worker` subcommand): reads jobs on stdin,
// answers on stdout; kernel printf output is sent to stderr so it cannot corrupt answers.
// `ordinal` picks the GPU (`ptxforge worker --device N`).
int worker_main(int ordinal = 0);

}  // namespace ptxforge::gpu
