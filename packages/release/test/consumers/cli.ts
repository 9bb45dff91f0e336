/**
 * A program using the installed `@tickwork/cli` from code: `Explain.explain` gives the
 * spring-forward slot of a Berlin cron expression with its DST note, and `Cli.runWith` runs the
 * whole command line on Node's services, failing on bad input.
 */
import assert from "node:assert/strict"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cli, Explain } from "@tickwork/cli"
import { Effect, Exit } from "effect"

const slots = Explain.explain({
  expression: "30 2 * * *",
  timeZone: "Europe/Berlin",
  from: Date.parse("2026-03-28T12:00:00Z"),
  count: 2,
})
assert.ok(Array.isArray(slots))
assert.equal(
  Explain.toText(slots),
  "2026-03-29T01:30:00Z  Sun 2026-03-29 03:30:00 +02:00  shifted +1h by the spring-forward gap\n" +
    "2026-03-30T00:30:00Z  Mon 2026-03-30 02:30:00 +02:00",
)

const exit = await Effect.runPromiseExit(
  Cli.runWith(["explain", "0 9 * * *", "--count", "0"]).pipe(Effect.provide(NodeServices.layer)),
)
assert.ok(Exit.isFailure(exit), "a count of 0 is refused")

console.log("cli: ok")
