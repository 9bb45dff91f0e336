/**
 * The app's tasks as the command model sees them (their options and real jobs, on the fakes),
 * and the app's own rules about them, checked after every command.
 */
import type * as Commands from "@tickwork/runtime/testing/commands"
import { Effect } from "effect"
import { chargeOrder, digest, retryPayment, sendDigest } from "./app.ts"
import { fakeMailer, fakePayments } from "./fakes.ts"

/** The app's tasks as templates: each run's planned outcome is set on the fake it talks to. */
export const templates = (): Record<string, Commands.Template> => {
  const mail = fakeMailer()
  const payments = fakePayments()
  return {
    digest: {
      ...digest,
      job: (outcome, run) => {
        mail.state.down = outcome === "fail"
        return sendDigest(run).pipe(Effect.provide(mail.layer))
      },
    },
    payment: {
      ...retryPayment("A-1001"),
      // Scheduled at the moment of a declined checkout: its first try is 10 minutes later.
      job: (outcome, run) => {
        payments.state.declines = outcome === "fail" ? 1 : 0
        return chargeOrder("A-1001")(run).pipe(Effect.provide(payments.layer))
      },
    },
  }
}

/** The app's rules, in terms of what the scheduler recorded. Throws on the first broken one. */
export const rules = (view: Commands.View): void => {
  for (const t of view.tasks) {
    const runs = view.occurrences.flatMap((o) =>
      o.id === t.id && (o.kind === "ran" || o.kind === "retried") ? [o] : [],
    )
    if (t.id.startsWith("payment")) {
      // A declined order is charged at most five times, and never again once it went through.
      if (runs.length > 5) throw new Error(`${t.id} was tried ${runs.length} times`)
      const paid = runs.findIndex((o) => o.outcome.kind === "succeeded")
      if (paid >= 0 && paid !== runs.length - 1) throw new Error(`${t.id} ran after it was paid`)
      continue
    }
    // One digest per night: a night's first try and its retries send it at most once, in at
    // most three tries.
    const nights = new Map<number, { tries: number; sent: number }>()
    let night = Number.NaN
    for (const o of runs) {
      if (o.attempt === 1) night = o.scheduledFor
      const n = nights.get(night) ?? { tries: 0, sent: 0 }
      n.tries++
      if (o.outcome.kind === "succeeded") n.sent++
      nights.set(night, n)
    }
    for (const [at, n] of nights) {
      if (n.sent > 1 || n.tries > 3) {
        throw new Error(`${t.id}, night of ${new Date(at).toISOString()}: ${JSON.stringify(n)}`)
      }
    }
    // Three nights in a row lost: its failure policy pauses it until someone resumes it (which
    // starts a fresh count), unless it was cancelled meanwhile.
    if (t.consecutiveFailures >= 3 && t.state !== "paused" && t.state !== "cancelled") {
      throw new Error(`${t.id} is ${t.state} after ${t.consecutiveFailures} lost nights`)
    }
  }
}
