#!/usr/bin/env node
/**
 * The `tickwork` executable. runMain sets the exit code: 0 on success, 1 when the command
 * failed (the message has been printed already), 130 on Ctrl-C.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import * as Cli from "./Cli.ts"

NodeRuntime.runMain(Cli.run.pipe(Effect.provide(NodeServices.layer)))
