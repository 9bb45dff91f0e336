/**
 * In-memory stand-ins for the application's services, whose answers a test controls: the mail
 * server can be down, the card issuer can decline. They record what the real jobs asked of them.
 */
import { Effect, Layer } from "effect"
import { MailError, Mailer, PaymentDeclined, Payments } from "./app.ts"

/** A mail server that is up or down, and the digests it delivered. */
export const fakeMailer = () => {
  const state = { down: false, sent: [] as Array<{ to: string; since: number }> }
  const layer = Layer.succeed(
    Mailer,
    Mailer.of({
      sendDigest: (to, since) =>
        Effect.suspend(() => {
          if (state.down) return Effect.fail(new MailError({ reason: "451 try again later" }))
          state.sent.push({ to, since })
          return Effect.void
        }),
    }),
  )
  return { state, layer }
}

/** A card issuer that declines the next `declines` charges, and the charges it accepted. */
export const fakePayments = () => {
  const state = { declines: 0, charged: [] as Array<string> }
  const layer = Layer.succeed(
    Payments,
    Payments.of({
      charge: (orderId) =>
        Effect.suspend(() => {
          if (state.declines > 0) {
            state.declines--
            return Effect.fail(new PaymentDeclined({ orderId }))
          }
          state.charged.push(orderId)
          return Effect.succeed(`receipt-${orderId}-${state.charged.length}`)
        }),
    }),
  )
  return { state, layer }
}
