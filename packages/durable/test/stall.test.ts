/**
 * A process stopped (SIGSTOP) past its lease, then continued (SIGCONT): another process has
 * taken the run meanwhile, so the stopped one must interrupt its old run as soon as it wakes,
 * before that run goes on, and not run it to its end beside the new owner's.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Effect, Schema } from "effect"
import { Handler, Postgres } from "../src/index.ts"
import { child } from "./children.ts"
import { withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

let db: { url: string; drop: () => Promise<void> }
beforeEach(async () => {
  db = await freshDatabase()
})
afterEach(async () => {
  await db.drop()
})

const until = async (what: string, check: () => boolean, ms: number) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A worker process and the lines it printed. */
const worker = async (owner: string) => {
  const lines: Array<string> = []
  const c = child("lease-worker.ts", [db.url, owner], (line) => lines.push(line))
  await until(`${owner} to start`, () => lines.includes("ready"), 60_000)
  return { ...c, lines, owner }
}

describe("a stalled process", () => {
  it.live(
    "SIGSTOP past the lease, then SIGCONT: the old run is interrupted on waking, not run to its end",
    () =>
      Effect.gen(function* () {
        const a = yield* Effect.promise(() => worker("A"))
        const b = yield* Effect.promise(() => worker("B"))
        const steps = Handler.make(
          "steps",
          Schema.Struct({ steps: Schema.Number, ms: Schema.Number }),
          () => Effect.void,
        )
        yield* withScheduler(
          Postgres.layer({ url: db.url }),
          { handlers: [steps], claim: false },
          (api) =>
            api.schedule({
              id: "long",
              handler: steps,
              payload: { steps: 100, ms: 100 },
              schedule: Schedule.once(0),
            }),
        )
        // Whichever process took it: stop it during its third step.
        yield* Effect.promise(() =>
          until(
            "a first delivery's third step",
            () => [a, b].some((w) => w.lines.includes("step 1 3")),
            60_000,
          ),
        )
        const [first, second] = a.lines.includes("step 1 3") ? [a, b] : [b, a]
        first.process.kill("SIGSTOP")
        const stoppedAt = first.lines.length
        // The other process takes the run once the lease has expired.
        yield* Effect.promise(() =>
          until("the second delivery", () => second.lines.includes("step 2 1"), 60_000),
        )
        const resumedAt = first.lines.length
        expect(resumedAt).toBe(stoppedAt)
        first.process.kill("SIGCONT")
        yield* Effect.promise(() =>
          until("the second delivery to end", () => second.lines.includes("end 2"), 120_000),
        )
        a.process.kill("SIGKILL")
        b.process.kill("SIGKILL")
        yield* Effect.promise(() => Promise.all([a.exited, b.exited]))
        const after = first.lines
          .slice(resumedAt)
          .filter((l) => l.startsWith("step 1 ") || l === "end 1")
        // The old run did not go on: at most the step whose timer was already due when it woke.
        expect(after.includes("end 1")).toBe(false)
        expect(after.length).toBeLessThanOrEqual(1)
        expect(second.lines.filter((l) => l.startsWith("step 2 "))).toHaveLength(100)
      }),
    240_000,
  )
})
