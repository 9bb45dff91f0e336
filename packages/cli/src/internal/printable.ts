/**
 * @internal
 * Text for a terminal: stored fields (ids, handlers, tags, errors, payloads, owners) are
 * written by whoever scheduled the task, and a control character in them would reach the
 * operator's terminal as a command (ESC starts a sequence that can retitle, recolour or rewrite
 * what is shown; BEL, backspace and carriage return move or hide text; the C1 range holds 8-bit
 * forms of the same sequences; bidirectional overrides reorder what is read). Every
 * human-readable output shows them as escapes instead, so the text printed is exactly the text
 * stored, made visible.
 */

/**
 * The characters shown escaped: C0 (U+0000–U+001F), DEL (U+007F), C1 (U+0080–U+009F), and the
 * bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** The same, but a line feed: output that is lines keeps its line breaks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/** `\n`, `\r`, `\t`; `\xHH` below U+0100; `\uHHHH` above. */
const escaped = (c: string): string => {
  const named = NAMED[c]
  if (named !== undefined) return named
  const code = c.charCodeAt(0)
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`
}

/**
 * `text` with every control character shown as an escape (`evil\x1b]0;pwned\x07`); with
 * `lines`, line feeds are kept (a whole rendered output), otherwise shown as `\n` (one cell).
 */
export const printable = (text: string, lines = false): string =>
  text.replace(lines ? CONTROL_BUT_LF : CONTROL, escaped)

/**
 * JSON text (from `JSON.stringify`) with the controls JSON leaves raw (DEL, C1, bidirectional
 * ones) written as `\uHHHH` escapes: the same JSON value, safe to print. C0 characters are
 * escaped by `JSON.stringify` already, and outside strings JSON holds none of these.
 */
export const printableJson = (json: string): string =>
  json.replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  )
