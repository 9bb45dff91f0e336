/**
 * @internal
 * The `--slot` of `tickwork retry` (SPEC §19.7), apart from the store commands' module so it
 * stays within the module size bound.
 */
import { Errors } from "@tickwork/core"

/**
 * Parses `--slot` (SPEC §19.7): epoch ms in decimal digits, or an ISO 8601 instant with its
 * offset (`2026-03-01T09:00:00Z`, `…+01:00`): a local time without one would name a different
 * instant on each machine. Anything else is an `InvalidTime` naming `slot` and the text.
 *
 * @category constructors
 * @since 0.6.0
 */
export const parseSlot = (text: string): number | Errors.InvalidTime => {
  const ms = /^[0-9]+$/.test(text)
    ? Number(text)
    : /^\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:\d{2})$/.test(text)
      ? Date.parse(text)
      : Number.NaN
  return Number.isSafeInteger(ms)
    ? ms
    : new Errors.InvalidTime({
        field: "slot",
        value: text,
        message: `slot must be epoch milliseconds or an ISO 8601 instant with its offset (2026-03-01T09:00:00Z), got ${Errors.show(text)}`,
      })
}
