/**
 * An application's scheduled work, as it would be written without any thought of tests: two
 * services it talks to, and two tasks.
 *
 * - `send-digest`: every night at 02:30 Berlin time, mail the team what happened since the last
 *   slot. A mail server hiccup is retried twice (5 then 10 minutes later); a night missed while
 *   the process was down is skipped, not caught up; three nights in a row that fail even after
 *   their retries mean something is broken for good, so the task fails and stops.
 * - `retry-payment-<order>`: ten minutes after a checkout was declined, try the charge again, up
 *   to four more times with exponential backoff and full jitter, ahead of other work.
 */
import { type Errors, type Retry, Schedule, Scheduler, type Task } from "@tickwork/runtime"
import { Context, Data, Effect } from "effect"

/** The mail server refused or timed out. */
export class MailError extends Data.TaggedError("MailError")<{ readonly reason: string }> {}

/** The card issuer declined the charge. */
export class PaymentDeclined extends Data.TaggedError("PaymentDeclined")<{
  readonly orderId: string
}> {}

/** Sends mail. */
export class Mailer extends Context.Service<
  Mailer,
  { readonly sendDigest: (to: string, since: number) => Effect.Effect<void, MailError> }
>()("app/Mailer") {}

/** Charges cards. */
export class Payments extends Context.Service<
  Payments,
  {
    readonly charge: (orderId: string, cents: number) => Effect.Effect<string, PaymentDeclined>
  }
>()("app/Payments") {}

/** A task's options, without its job. */
export interface TaskOptions {
  readonly id: string
  readonly schedule: Schedule.Schedule
  readonly retry: Retry.RetryPolicy
  readonly priority?: Task.Priority
  readonly missedRuns?: "catch-up" | "coalesce" | "skip"
  readonly pauseAfterConsecutiveFailures?: number
}

/** The nightly digest's options. */
export const digest: TaskOptions = {
  id: "send-digest",
  schedule: Schedule.cron("30 2 * * *", { timeZone: "Europe/Berlin" }),
  retry: { maxRetries: 2, base: "5 minutes", factor: 2 },
  missedRuns: "skip",
  pauseAfterConsecutiveFailures: 3,
}

const day = 24 * 3_600_000

/**
 * The digest's job: everything since the start of the day before (UTC). A retry's slot is the
 * time of the retry, so the day is taken from it, not the slot itself.
 */
export const sendDigest = (run: Task.RunInfo): Effect.Effect<void, MailError, Mailer> =>
  Mailer.use((mailer) =>
    mailer.sendDigest("team@example.com", Math.floor(run.scheduledFor / day) * day - day),
  )

/** The options of the task that retries a declined order's payment. */
export const retryPayment = (orderId: string): TaskOptions => ({
  id: `retry-payment-${orderId}`,
  schedule: Schedule.once("10 minutes"),
  retry: { maxRetries: 4, base: "30 seconds", factor: 2, jitter: "full" },
  priority: "high",
})

/** The payment task's job. */
export const chargeOrder =
  (orderId: string) =>
  (_run: Task.RunInfo): Effect.Effect<string, PaymentDeclined, Payments> =>
    Payments.use((payments) => payments.charge(orderId, 1999))

/** Starts the application's scheduled work. */
export const start = (
  declinedOrders: ReadonlyArray<string>,
): Effect.Effect<
  void,
  Errors.ScheduleError | Errors.SchedulerClosed,
  Scheduler.Scheduler | Mailer | Payments
> =>
  Effect.gen(function* () {
    const scheduler = yield* Scheduler.Scheduler
    yield* scheduler.schedule({ ...digest, job: sendDigest })
    for (const orderId of declinedOrders) {
      yield* scheduler.schedule({ ...retryPayment(orderId), job: chargeOrder(orderId) })
    }
  })
