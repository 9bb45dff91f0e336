/**
 * The `tickwork` root command and how to run it. Every tool is a subcommand of the root
 * (`tickwork explain …`, `tickwork tasks --store …`, `tickwork dashboard …`); new ones are added to {@link subcommands}.
 *
 * @since 0.1.0
 */
import { Command } from "effect/cli"
import * as Dashboard from "./Dashboard.ts"
import * as Explain from "./Explain.ts"
import * as Store from "./Store.ts"

/**
 * The CLI's version, shown by `tickwork --version`. Kept equal to the package's version by a test.
 *
 * @category models
 * @since 0.1.0
 */
export const version = "0.1.0"

/**
 * The subcommands of `tickwork`, in the order help lists them.
 *
 * @category models
 * @since 0.1.0
 */
export const subcommands = [Explain.command, ...Store.commands, Dashboard.command] as const

/**
 * The root command, `tickwork`. It does nothing by itself: without a subcommand it prints help.
 *
 * @category constructors
 * @since 0.1.0
 */
export const root = Command.make("tickwork").pipe(
  Command.withDescription(
    "tickwork: inspect schedules, and inspect and control the tasks of a durable store.",
  ),
  Command.withSubcommands(subcommands),
)

/**
 * Runs `tickwork` with explicit arguments (without the `node` and script paths), e.g.
 * `["explain", "30 2 * * *", "--tz", "Europe/Berlin"]`. Output goes through Effect's `Console`;
 * bad input fails the effect after its message has been shown.
 *
 * **Example** (Running `explain` in a program or a test)
 *
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Cli } from "@tickwork/cli"
 * await Effect.runPromise(
 *   Cli.runWith(["explain", "0 9 * * MON-FRI", "--tz", "America/New_York", "--count", "3"]).pipe(
 *     Effect.provide(NodeServices.layer),
 *   ),
 * )
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const runWith = Command.runWith(root, { version })

/**
 * Runs `tickwork` with the process's arguments, read from the `Stdio` service.
 *
 * @category constructors
 * @since 0.1.0
 */
export const run = Command.run(root, { version })
