/**
 * `Kernel.retry` given a slot (SPEC §19.7) for a task with no side data: a one-shot scheduled
 * with a generated id, which the kernel keeps in its row alone.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule } from "../src/index.ts"

describe("retry of one slot: a task with no side data (SPEC §19.7)", () => {
  it("a one-shot with a generated id is refused as a one-shot, and keeps its pending run", () => {
    const k = new Kernel.Kernel<string>()
    const id = k.schedule({ job: "a", schedule: Schedule.once(100) }, 0) as string
    const refused = k.retry(id, 5, { slot: 100, runs: { lastAttempt: 1, failed: true } })
    expect(refused).toMatchObject({
      _tag: "ManualRunRefused",
      action: "retry",
      state: "scheduled",
      slot: 100,
    })
    expect((refused as { message: string }).message).toContain("a one-shot has one slot")
    expect(k.info(id)).toMatchObject({ state: "scheduled", scheduledFor: 100, attempt: 1 })
    expect(k.takeDue(100)).toMatchObject({ id, slot: 100, attempt: 1 })
  })
})
