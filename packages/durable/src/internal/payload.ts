/**
 * @internal
 * The payload codec: a handler's schema encodes the payload to JSON text when a task is
 * scheduled (a payload it rejects, whose encoded form JSON would change, or that does not decode
 * back from JSON, is an `InvalidPayload` naming the field) and decodes it before every run (`PayloadDecodeError`).
 */
import { Errors } from "@tickwork/core"
import { Effect, Result, Schema } from "effect"
import { InvalidPayload, PayloadDecodeError } from "../Errors.ts"
import type * as Handler from "../Handler.ts"

/** The field path of a schema issue's first problem, e.g. `["to"]`. */
const issuePath = (issue: unknown): ReadonlyArray<PropertyKey> => {
  if (typeof issue !== "object" || issue === null) return []
  const i = issue as {
    path?: ReadonlyArray<PropertyKey>
    issue?: unknown
    issues?: ReadonlyArray<unknown>
  }
  if (Array.isArray(i.path) && i.issue !== undefined) return [...i.path, ...issuePath(i.issue)]
  if (Array.isArray(i.issues) && i.issues.length > 0) return issuePath(i.issues[0])
  if (i.issue !== undefined) return issuePath(i.issue)
  return []
}

const at = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let v = value
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined
    v = (v as Record<PropertyKey, unknown>)[key]
  }
  return v
}

const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  `payload${path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("")}`

/**
 * Where `value` (a schema's encoded form) first stops being what `JSON.parse(JSON.stringify(value))`
 * gives back, and what is lost there; `undefined` when it survives. A schema such as
 * `Schema.Unknown` passes anything through, and JSON would then store a `Date` as a string,
 * drop a function or a `Map`'s entries, and write `NaN` as `null`: the run would get another
 * value than the one scheduled. A property whose value is `undefined` is dropped too, but reads
 * back as the same absent property, so it counts as kept. Cycles and bigints make
 * `JSON.stringify` throw, and are refused where it is called.
 */
export const lost = (
  value: unknown,
  path: ReadonlyArray<PropertyKey>,
): { readonly path: ReadonlyArray<PropertyKey>; readonly what: string } | undefined => {
  const found = lostAt(value)
  if (found === undefined) return undefined
  return { path: [...path, ...found.path.reverse()], what: found.what }
}

/**
 * `lost` below `value`, its path innermost key first: a path is built only for a value that is
 * lost (every task's payload is walked when it is scheduled, and nearly all survive).
 */
const lostAt = (value: unknown): { path: Array<PropertyKey>; what: string } | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(value) ? undefined : { path: [], what: `${value} (stored as null)` }
    case "object": {
      if (value === null) return undefined
      if (Array.isArray(value)) {
        for (let k = 0; k < value.length; k++) {
          const v = value[k]
          if (v === undefined || typeof v === "function" || typeof v === "symbol") {
            return { path: [k], what: `${typeof v} (stored as null)` }
          }
          const inner = lostAt(v)
          if (inner !== undefined) {
            inner.path.push(k)
            return inner
          }
        }
        return undefined
      }
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) {
        const name = (value as { constructor?: { name?: unknown } }).constructor?.name
        return {
          path: [],
          what: `a ${typeof name === "string" && name !== "" ? name : "class instance"} (JSON keeps only its own fields, as a plain object${value instanceof Date ? "; a Date becomes a string" : ""})`,
        }
      }
      // Own enumerable string keys, as JSON.stringify reads them (the prototype is a plain
      // object's or none: nothing inherited is enumerable).
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        const v = (value as Record<string, unknown>)[key]
        if (v === undefined) continue
        if (typeof v === "function" || typeof v === "symbol") {
          return { path: [key], what: `a ${typeof v} (dropped)` }
        }
        const inner = lostAt(v)
        if (inner !== undefined) {
          inner.path.push(key)
          return inner
        }
      }
      return undefined
    }
    default:
      return { path: [], what: `a ${typeof value}` }
  }
}

/**
 * Each payload schema's encoder and decoder, made once: effect's `encodeUnknownResult(schema)`
 * makes a new function, which compiles its parser again at its first call.
 */
const codecs = new WeakMap<
  Handler.Any["payload"],
  {
    readonly encode: ReturnType<typeof Schema.encodeUnknownResult<Handler.Any["payload"]>>
    readonly decode: ReturnType<typeof Schema.decodeUnknownResult<Handler.Any["payload"]>>
  }
>()

const codecOf = (schema: Handler.Any["payload"]) => {
  let codec = codecs.get(schema)
  if (codec === undefined) {
    codec = {
      encode: Schema.encodeUnknownResult(schema),
      decode: Schema.decodeUnknownResult(schema),
    }
    codecs.set(schema, codec)
  }
  return codec
}

/** The payload encoded by `handler`'s schema, as the JSON text a row keeps. */
export const encode = (handler: Handler.Any, payload: unknown): string | InvalidPayload => {
  const codec = codecOf(handler.payload)
  const encoded = codec.encode(payload)
  if (Result.isFailure(encoded)) {
    const path = issuePath(encoded.failure.issue)
    const field = fieldOf(path)
    const value = path.length === 0 ? payload : at(payload, path)
    const reason = encoded.failure.message.split("\n")[0]
    return new InvalidPayload({
      field,
      value,
      handler: handler.name,
      message: `${field} does not match the schema of handler ${Errors.show(handler.name)}: ${reason}, got ${Errors.show(value)}`,
    })
  }
  const loss = lost(encoded.success, [])
  if (loss !== undefined) {
    const field = fieldOf(loss.path)
    const value = loss.path.length === 0 ? encoded.success : at(encoded.success, loss.path)
    return new InvalidPayload({
      field,
      value,
      handler: handler.name,
      message: `${field} of handler ${Errors.show(handler.name)} cannot be stored: its encoded form does not survive JSON (${loss.what}), got ${Errors.show(value)}; give the handler a schema that encodes it to JSON (e.g. Schema.DateFromString for a Date)`,
    })
  }
  let text: string | undefined
  try {
    text = JSON.stringify(encoded.success)
  } catch {
    text = undefined
  }
  const back = text === undefined ? undefined : codec.decode(JSON.parse(text))
  if (text === undefined || back === undefined || Result.isFailure(back)) {
    return new InvalidPayload({
      field: "payload",
      value: payload,
      handler: handler.name,
      message: `payload of handler ${Errors.show(handler.name)} cannot be stored: its encoded form is not JSON that decodes back${
        back !== undefined && Result.isFailure(back)
          ? ` (${back.failure.message.split("\n")[0]})`
          : ""
      }`,
    })
  }
  return text
}

/** The stored payload `text` of task `taskId`, decoded by `handler`'s schema for a run. */
export const decode = (
  handler: Handler.Any,
  taskId: string,
  text: string,
): Effect.Effect<unknown, PayloadDecodeError> => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    return Effect.fail(
      new PayloadDecodeError({
        handler: handler.name,
        taskId,
        message: `the stored payload of task ${Errors.show(taskId)} is not JSON: ${String(error)}`,
      }),
    )
  }
  const decoded = codecOf(handler.payload).decode(raw)
  return Result.isSuccess(decoded)
    ? Effect.succeed(decoded.success)
    : Effect.fail(
        new PayloadDecodeError({
          handler: handler.name,
          taskId,
          message: `the stored payload of task ${Errors.show(taskId)} no longer matches the schema of handler ${Errors.show(handler.name)}: ${decoded.failure.message}`,
        }),
      )
}
