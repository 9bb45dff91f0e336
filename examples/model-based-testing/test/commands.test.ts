/**
 * A fast-check command model with the app's own tasks: random sequences of scheduling them,
 * moving the clock by up to a day and a half (across the switch to summer time), jumping to the
 * next slot, cancelling, and making runs fail, checked against tickwork's deterministic
 * reference after every command — and against the app's own rules. `FC_RUNS_MODEL` sets the
 * number of runs (default 200).
 */
import * as Commands from "@tickwork/runtime/testing/commands"
import { describe, expect, it } from "vitest"
import { rules, templates } from "../src/model.ts"

const RUNS = Number(process.env.FC_RUNS_MODEL ?? 200)
const hour = 3_600_000

describe(`the app's tasks in a command model (${RUNS} runs)`, () => {
  it(
    "the scheduler agrees with the reference, and the app's rules hold, after every command",
    async () => {
      const report = await Commands.check({
        numRuns: RUNS,
        templates: templates(),
        startAt: new Date("2026-03-26T12:00:00Z"),
        advance: { max: 36 * hour },
        invariant: rules,
      })
      expect(report.runs).toBe(RUNS)
      expect(report.commands).toBeGreaterThan(RUNS)
    },
    60_000 + RUNS * 200,
  )

  it("the rules catch a payment charged again after it went through", () => {
    const paid = {
      kind: "ran",
      id: "payment0",
      generation: 1,
      scheduledFor: 0,
      startedAt: 0,
      finishedAt: 0,
      attempt: 1,
      runNumber: 1,
      outcome: { kind: "succeeded" },
      state: "done",
      continuation: "final",
      nextSlot: undefined,
      dropped: undefined,
      merged: undefined,
    } as const
    const view = {
      now: 0,
      lines: [],
      tasks: [{ id: "payment0", consecutiveFailures: 0, state: "done" }],
      occurrences: [paid, { ...paid, attempt: 2, runNumber: 2 }],
    } as unknown as Commands.View
    expect(() => rules(view)).toThrow(/payment0 ran after it was paid/)
  })
})
