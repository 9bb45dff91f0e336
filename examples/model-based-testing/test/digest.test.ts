/**
 * An ordinary example-based test of the app, with the test layer and the run-trace recorder:
 * three nights of the digest (the second with a mail server that is down until its last retry,
 * the third the night the clocks go forward), and a declined payment that goes through on its
 * third try.
 */
import { TestScheduler, Trace } from "@tickwork/runtime/testing"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { start } from "../src/app.ts"
import { fakeMailer, fakePayments } from "../src/fakes.ts"

describe("the app's scheduled work, three nights in virtual time", () => {
  it("retries the digest through a mail outage and charges the order on its third try", async () => {
    const mail = fakeMailer()
    const payments = fakePayments()
    const trace = await TestScheduler.run(
      Effect.gen(function* () {
        const trace = yield* Trace.record({ time: "iso" })
        payments.state.declines = 2
        yield* start(["A-1001"])
        yield* TestScheduler.advanceTo(new Date("2026-03-28T00:00:00Z"))
        mail.state.down = true // for the night of the 28th, until just before its last retry
        yield* TestScheduler.advanceTo(new Date("2026-03-28T01:40:00Z"))
        mail.state.down = false
        yield* TestScheduler.advanceTo(new Date("2026-03-29T12:00:00Z"))
        return trace
      }).pipe(Effect.provide(Layer.merge(mail.layer, payments.layer))),
      { startAt: new Date("2026-03-26T12:00:00Z") },
    )
    // Payment retries: 30 s and 60 s backoffs with full jitter (seeded, so always the same); a
    // retry keeps its grid slot (`slot=`) and is due later (`due=`).
    expect(trace.lines({ id: "retry-payment-A-1001" })).toEqual([
      "2026-03-26T12:10:00.000Z retry-payment-A-1001 retried slot=2026-03-26T12:10:00.000Z start=2026-03-26T12:10:00.000Z attempt=1 run=1 failed -> scheduled@2026-03-26T12:10:17.202Z",
      "2026-03-26T12:10:17.202Z retry-payment-A-1001 retried slot=2026-03-26T12:10:00.000Z due=2026-03-26T12:10:17.202Z start=2026-03-26T12:10:17.202Z attempt=2 run=2 failed -> scheduled@2026-03-26T12:10:31.461Z",
      "2026-03-26T12:10:31.461Z retry-payment-A-1001 ran slot=2026-03-26T12:10:00.000Z due=2026-03-26T12:10:31.461Z start=2026-03-26T12:10:31.461Z attempt=3 run=3 succeeded -> done",
    ])
    // 02:30 in Berlin is 01:30Z in winter time. On the 29th, 02:30 does not exist (02:00 -> 03:00):
    // the digest runs at 03:30 local, 01:30Z, and at 00:30Z from the 30th on.
    expect(trace.lines({ id: "send-digest" })).toEqual([
      "2026-03-27T01:30:00.000Z send-digest ran slot=2026-03-27T01:30:00.000Z start=2026-03-27T01:30:00.000Z attempt=1 run=1 succeeded -> scheduled@2026-03-28T01:30:00.000Z",
      "2026-03-28T01:30:00.000Z send-digest retried slot=2026-03-28T01:30:00.000Z start=2026-03-28T01:30:00.000Z attempt=1 run=2 failed -> scheduled@2026-03-28T01:35:00.000Z",
      "2026-03-28T01:35:00.000Z send-digest retried slot=2026-03-28T01:30:00.000Z due=2026-03-28T01:35:00.000Z start=2026-03-28T01:35:00.000Z attempt=2 run=3 failed -> scheduled@2026-03-28T01:45:00.000Z",
      "2026-03-28T01:45:00.000Z send-digest ran slot=2026-03-28T01:30:00.000Z due=2026-03-28T01:45:00.000Z start=2026-03-28T01:45:00.000Z attempt=3 run=4 succeeded -> scheduled@2026-03-29T01:30:00.000Z",
      "2026-03-29T01:30:00.000Z send-digest ran slot=2026-03-29T01:30:00.000Z start=2026-03-29T01:30:00.000Z attempt=1 run=5 succeeded -> scheduled@2026-03-30T00:30:00.000Z",
    ])
    // One digest a night, each since the start of the day before.
    expect(mail.state.sent.map((m) => new Date(m.since).toISOString())).toEqual([
      "2026-03-26T00:00:00.000Z",
      "2026-03-27T00:00:00.000Z",
      "2026-03-28T00:00:00.000Z",
    ])
    expect(payments.state.charged).toEqual(["A-1001"])
  })
})
