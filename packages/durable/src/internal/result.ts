/**
 * @internal
 * A handler's kept result (SPEC §19.3): the value a run succeeds with, encoded by the handler's
 * `result` schema to JSON text on the worker that ran it, and bounded by the core's rule
 * (`Results.keep`). Decoded again when a scheduler reads its ledger.
 */
import { Results } from "@tickwork/core"
import { Result, Schema } from "effect"
import type * as Handler from "../Handler.ts"
import { lost } from "./payload.ts"

/**
 * The job's value once the worker has encoded it: what the completion writes. A distinct class,
 * so that a completion tells it from a value of a handler with no `result` schema.
 */
export class Encoded {
  readonly kept: Results.Kept
  constructor(kept: Results.Kept) {
    this.kept = kept
  }
}

/** `value`, encoded by `handler.result` and bounded; `undefined` when the handler keeps none. */
export const encode = (
  handler: Handler.Any,
  taskId: string,
  value: unknown,
  limit: number,
): Encoded | undefined => {
  // SPEC §19.3: a run that returns nothing keeps nothing, whatever its schema.
  if (handler.result === undefined || value === undefined) return undefined
  const encoded = Schema.encodeUnknownResult(handler.result)(value)
  if (Result.isFailure(encoded)) {
    return new Encoded(
      Results.notEncodable(
        taskId,
        `the result schema of handler "${handler.name}" refused it: ${encoded.failure.message.split("\n")[0]}`,
      ),
    )
  }
  const loss = lost(encoded.success, [])
  if (loss !== undefined) {
    return new Encoded(
      Results.notEncodable(
        taskId,
        `its encoded form does not survive JSON (${loss.what} at result${loss.path.map((k) => `.${String(k)}`).join("")})`,
      ),
    )
  }
  let json: string
  try {
    json = JSON.stringify(encoded.success) ?? "null"
  } catch (error) {
    return new Encoded(Results.notEncodable(taskId, `JSON cannot write it (${String(error)})`))
  }
  return new Encoded(Results.keep(taskId, json, limit))
}

/** The kept result of a ledger row, decoded by `handler.result`; `undefined` when there is none. */
export const decode = (handler: Handler.Any | undefined, json: string | null): unknown => {
  if (json === null || handler?.result === undefined) return undefined
  try {
    const decoded = Schema.decodeUnknownResult(handler.result)(JSON.parse(json))
    return Result.isSuccess(decoded) ? decoded.success : undefined
  } catch {
    return undefined
  }
}
