/**
 * Every transition of each task's lifecycle, walked on a real scheduler with the app's own jobs:
 * the paths come from the task machine (`xstate/graph`) for the task's retry and failure policy,
 * pauses and resumes included, and the fakes make each run succeed or fail as the path says.
 */
import type { Task } from "@tickwork/runtime"
import { LifecyclePaths, TestScheduler } from "@tickwork/runtime/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { chargeOrder, digest, retryPayment, sendDigest } from "../src/app.ts"
import { fakeMailer, fakePayments } from "../src/fakes.ts"

/** Thursday before the switch to summer time in Berlin (Sunday 29 March 2026, 02:00 → 03:00). */
const startAt = new Date("2026-03-26T12:00:00Z")

describe("send-digest", () => {
  const mail = fakeMailer()
  const task: LifecyclePaths.TaskUnderTest<never> = {
    ...digest,
    job: (outcome, run: Task.RunInfo) => {
      mail.state.down = outcome === "fail" // the mail server is down for a run the path fails
      return sendDigest(run).pipe(Effect.provide(mail.layer))
    },
  }
  const plan = LifecyclePaths.generate(LifecyclePaths.inputOf(digest))

  it("has paths through every transition its policy allows", () => {
    expect(plan.input).toEqual({ maxRetries: 2, pauseAfter: 3, recurring: true, expires: false })
    expect(plan.transitions).toEqual([
      "cancelled --CANCEL--> (ignored)",
      "paused --CANCEL--> cancelled",
      "paused --RESUME--> scheduled",
      "running --CANCEL--> cancelled",
      "running --FAIL [hasNextSlot]--> scheduled",
      "running --FAIL [retriesLeft]--> scheduled",
      // Paused during a run: a retry it still had is held, not dropped.
      "running --FAIL [retryHeld]--> paused",
      // Three lost nights in a row (or a pause during the run): paused, never failed for good.
      "running --FAIL [stopsAfterFailure]--> paused",
      "running --PAUSE [notPauseRequested]--> running",
      "running --RESUME [pauseRequested]--> running",
      "running --SUCCEED [hasNextSlot]--> scheduled",
      "running --SUCCEED [pausing]--> paused",
      "scheduled --CANCEL--> cancelled",
      "scheduled --PAUSE--> paused",
      "scheduled --START--> running",
    ])
  })

  it.each(plan.paths.map((p) => [p.name, p] as const))("%s", async (_name, path) => {
    const sent = mail.state.sent.length
    await TestScheduler.run(LifecyclePaths.play(path, { task }), { startAt })
    // Each run the path lets succeed delivered one digest, through the app's own job.
    const succeeded = path.steps.filter((s) => s.event.type === "SUCCEED").length
    expect(mail.state.sent.length - sent).toBe(succeeded)
  })
})

describe("retry-payment", () => {
  const payments = fakePayments()
  const options = retryPayment("A-1001")
  const task: LifecyclePaths.TaskUnderTest<never> = {
    ...options,
    job: (outcome, run) => {
      payments.state.declines = outcome === "fail" ? 1 : 0
      return chargeOrder("A-1001")(run).pipe(Effect.provide(payments.layer))
    },
  }

  it("walks every path, one fresh scheduler each", async () => {
    const report = await Effect.runPromise(LifecyclePaths.check({ task, layer: { startAt } }))
    expect(report).toMatchObject({
      input: { maxRetries: 4, pauseAfter: 0, recurring: false, expires: false },
      transitions: [
        "cancelled --CANCEL--> (ignored)",
        "done --CANCEL--> (ignored)",
        "failed --CANCEL--> (ignored)",
        "paused --CANCEL--> cancelled",
        "paused --RESUME--> scheduled",
        "running --CANCEL--> cancelled",
        "running --FAIL [retriesLeft]--> scheduled",
        "running --FAIL [retryHeld]--> paused",
        "running --FAIL--> failed",
        "running --PAUSE [notPauseRequested]--> running",
        "running --RESUME [pauseRequested]--> running",
        "running --SUCCEED--> done",
        "scheduled --CANCEL--> cancelled",
        "scheduled --PAUSE--> paused",
        "scheduled --START--> running",
      ],
    })
    expect(report.paths).toBeGreaterThan(10)
    expect(payments.state.charged.length).toBeGreaterThan(0)
  })
})
