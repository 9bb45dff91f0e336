#!/usr/bin/env node
/**
 * The `tickwork` executable. `Main.runMain` sets the exit code: 0 on success, 1 when the command
 * failed (the message has been printed already), 0 when a long-running command such as
 * `dashboard` is stopped with SIGTERM, 130 on Ctrl-C.
 */
// The submodules, not the package's index: the index also loads NodeRedis, which imports the
// `redis` peer of @effect/platform-node, and an install that leaves peers out has no `redis`.
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Main } from "@tickwork/runtime"
import { Effect } from "effect"
import * as Cli from "./Cli.ts"

Main.runMain(Cli.run.pipe(Effect.provide(NodeServices.layer)))
