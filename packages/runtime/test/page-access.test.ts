// The rules shared by every served page (the CLI's dashboard, the live view).
import { describe, expect, it } from "vitest"
import { PageAccess } from "../src/index.ts"

describe("PageAccess", () => {
  it("names loopback addresses only as loopback", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) {
      expect(PageAccess.isLoopback(h)).toBe(true)
    }
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "localhost.attacker.example", "128.0.0.1"]) {
      expect(PageAccess.isLoopback(h)).toBe(false)
    }
  })

  it("allows the served addresses as Host, with their port, and nothing else", () => {
    const hosts = PageAccess.allowedHosts("127.0.0.1", 4477)
    expect(PageAccess.hostAllowed(hosts, "LOCALHOST:4477")).toBe(true)
    expect(PageAccess.hostAllowed(hosts, "[::1]:4477")).toBe(true)
    expect(PageAccess.hostAllowed(hosts, "localhost")).toBe(false)
    expect(PageAccess.hostAllowed(hosts, "localhost:4478")).toBe(false)
    expect(PageAccess.hostAllowed(hosts, "attacker.example:4477")).toBe(false)
    expect(PageAccess.hostAllowed(hosts, undefined)).toBe(false)
    const v6 = PageAccess.allowedHosts("[::1]", 80)
    expect(PageAccess.hostAllowed(v6, "[::1]")).toBe(true)
    const all = PageAccess.allowedHosts("0.0.0.0", 9000)
    expect(PageAccess.hostAllowed(all, "127.0.0.1:9000")).toBe(true)
    expect(PageAccess.hostAllowed(all, "attacker.example:9000")).toBe(false)
  })

  it("allows the served origins; an absent Origin only when not required", () => {
    const origins = PageAccess.allowedOrigins(PageAccess.allowedHosts("127.0.0.1", 4477))
    expect(PageAccess.originAllowed(origins, "http://localhost:4477", true)).toBe(true)
    expect(PageAccess.originAllowed(origins, "http://attacker.example", false)).toBe(false)
    expect(PageAccess.originAllowed(origins, "https://localhost:4477", false)).toBe(false)
    expect(PageAccess.originAllowed(origins, "null", false)).toBe(false)
    expect(PageAccess.originAllowed(origins, undefined, false)).toBe(true)
    expect(PageAccess.originAllowed(origins, undefined, true)).toBe(false)
  })

  it("makes, checks and compares tokens", () => {
    const token = PageAccess.newToken()
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(PageAccess.newToken()).not.toBe(token)
    expect(PageAccess.sameToken(token, token)).toBe(true)
    expect(PageAccess.sameToken(`${token}x`, token)).toBe(false)
    expect(PageAccess.sameToken(undefined, token)).toBe(false)
    expect(PageAccess.checkToken("TOKEN_VAR", token)).toBe(token)
    const short = PageAccess.checkToken("TOKEN_VAR", "short")
    expect(short).toMatchObject({
      _tag: "InvalidOption",
      field: "TOKEN_VAR",
      value: "5 characters",
    })
    expect(PageAccess.checkToken("TOKEN_VAR", "sixteen chars   with spaces")).toMatchObject({
      _tag: "InvalidOption",
    })
  })
})
