/**
 * Who may read a page served by a tickwork process (the CLI's dashboard, the live view): the
 * checks that keep other websites and other machines out, shared so every page applies the
 * same rules.
 *
 * - **Host** ({@link allowedHosts}, {@link hostAllowed}): a request's `Host` must name an
 *   address the server serves. A DNS-rebinding page points its own name at this address, and
 *   its requests carry that name: refused (answer 421), it reads nothing.
 * - **Origin** ({@link allowedOrigins}, {@link originAllowed}): a browser sends `Origin` on a
 *   WebSocket upgrade and on a POST; one naming another site is refused, since the browser would
 *   otherwise carry the user's reach to this address into that site's script.
 * - **Token** ({@link newToken}, {@link checkToken}, {@link sameToken}): served beyond loopback,
 *   another machine can connect, and only a caller holding the token (printed at start, or
 *   given in an environment variable) may read. It is compared in constant time.
 *
 * @since 0.2.0
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { hostname, networkInterfaces } from "node:os"
import { Errors } from "@tickwork/core"

/**
 * The shortest token {@link checkToken} accepts, in characters.
 *
 * @category models
 * @since 0.2.0
 */
export const MIN_TOKEN_LENGTH = 16

/**
 * Whether `host` names this machine only (`127.0.0.0/8`, `::1`, `localhost`): then no other
 * machine can reach the server, and reading needs no token.
 *
 * **Example** (Loopback or not)
 *
 * ```ts
 * import { PageAccess } from "@tickwork/runtime"
 * PageAccess.isLoopback("127.0.0.1") // true
 * PageAccess.isLoopback("0.0.0.0") // false
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const isLoopback = (host: string): boolean =>
  host === "localhost" ||
  host === "::1" ||
  host === "[::1]" ||
  /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/**
 * Whether `host` is a wildcard bind address (every interface).
 *
 * @category getters
 * @since 0.2.0
 */
export const isWildcard = (host: string): boolean =>
  host === "0.0.0.0" || host === "::" || host === "[::]"

/**
 * `host` as it appears in a URL or a `Host` header: an IPv6 address in brackets.
 *
 * @category getters
 * @since 0.2.0
 */
export const bracket = (host: string): string =>
  host.includes(":") && !host.startsWith("[") ? `[${host}]` : host

/**
 * The `Host` header values a request to a server bound to `host:port` may carry, lower case:
 * the bound address (every interface's address and this machine's name for a wildcard), and
 * `localhost` with the loopback addresses when those are served, each with `:port` (and bare
 * too on port 80).
 *
 * **Example** (A loopback server)
 *
 * ```ts
 * import { PageAccess } from "@tickwork/runtime"
 * PageAccess.allowedHosts("127.0.0.1", 4477).has("localhost:4477") // true
 * PageAccess.allowedHosts("127.0.0.1", 4477).has("attacker.example:4477") // false
 * ```
 *
 * @category getters
 * @since 0.2.0
 */
export const allowedHosts = (host: string, port: number): ReadonlySet<string> => {
  const bare = host.replace(/^\[|\]$/g, "")
  const names = new Set<string>()
  const loopbackNames = ["localhost", "127.0.0.1", "[::1]"]
  if (isWildcard(bare)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) names.add(bracket(a.address.split("%")[0] ?? a.address))
    }
    names.add(hostname())
    for (const n of loopbackNames) names.add(n)
  } else {
    names.add(bracket(bare))
    if (isLoopback(bare)) for (const n of loopbackNames) names.add(n)
  }
  const out = new Set<string>()
  for (const n of names) {
    out.add(`${n.toLowerCase()}:${port}`)
    if (port === 80) out.add(n.toLowerCase())
  }
  return out
}

/**
 * The `Origin` values a page served on `hosts` sends: `http://` and each host.
 *
 * @category getters
 * @since 0.2.0
 */
export const allowedOrigins = (hosts: ReadonlySet<string>): ReadonlySet<string> =>
  new Set([...hosts].map((h) => `http://${h}`))

/**
 * Whether a request's `Host` header (absent: refused) names one of `hosts`.
 *
 * @category getters
 * @since 0.2.0
 */
export const hostAllowed = (hosts: ReadonlySet<string>, header: string | undefined): boolean =>
  hosts.has((header ?? "").toLowerCase())

/**
 * Whether a request's `Origin` header names one of `origins`. An absent `Origin` passes only
 * when `required` is false: browsers always send it on a WebSocket upgrade and a POST, so its
 * absence means a client that is no browser, which no other website can drive.
 *
 * @category getters
 * @since 0.2.0
 */
export const originAllowed = (
  origins: ReadonlySet<string>,
  header: string | undefined,
  required: boolean,
): boolean => (header === undefined ? !required : origins.has(header.toLowerCase()))

/**
 * A fresh random token: 24 bytes, base64url (32 characters, safe in a URL and a header).
 *
 * @category constructors
 * @since 0.2.0
 */
export const newToken = (): string => randomBytes(24).toString("base64url")

/**
 * Checks a token taken from the environment variable `field`: at least
 * {@link MIN_TOKEN_LENGTH} characters, printable ASCII without spaces (it travels in an HTTP
 * header or a URL). Else an `InvalidOption` naming the variable and the token's length (never
 * the token).
 *
 * **Example** (Too short)
 *
 * ```ts
 * import { PageAccess } from "@tickwork/runtime"
 * PageAccess.checkToken("TOKEN", "abc") // InvalidOption: TOKEN must be at least 16 …
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const checkToken = (field: string, token: string): string | Errors.InvalidOption =>
  token.length >= MIN_TOKEN_LENGTH && /^[\x21-\x7e]+$/.test(token)
    ? token
    : new Errors.InvalidOption({
        field,
        value: `${token.length} characters`,
        message: `${field} must be at least ${MIN_TOKEN_LENGTH} printable ASCII characters without spaces, got ${token.length} character${token.length === 1 ? "" : "s"}`,
      })

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest()

/**
 * Whether `given` is `token`, compared in time independent of where they differ (both are
 * hashed first, so their lengths leak nothing either). `undefined` is never the token.
 *
 * @category getters
 * @since 0.2.0
 */
export const sameToken = (given: string | undefined, token: string): boolean =>
  given !== undefined && timingSafeEqual(digest(given), digest(token))
