// Package origin normalises the host of an origin as polite keys it, so
// that the packages that name an origin (the budget's keys, robots.txt's
// cache, otelpolite's attributes) name it alike.
package origin

import (
	"net/netip"
	"strings"
	"unicode/utf8"
)

// Normal normalises the host[:port] of an origin, as polite keys it: the
// default port of its scheme dropped (80 for http, 443 for https), a port
// without leading zeros, no trailing dot, lower case, an internationalised
// host in its ASCII form (see toASCII), an IPv6 literal in its canonical
// form (see canonicalIP).
//
// A host it returns is normal: normalised again, it is the same, so that
// the name of a key, normalised again, names the same origin.
func Normal(scheme, hostport string) string {
	if isNormal(hostport) {
		return hostport
	}
	// An empty port is none ("api.test:"), and so are the colons before
	// it ("api.test::"): cut one at a time, the host, normalised again,
	// would lose another.
	hp := strings.TrimRight(hostport, ":")
	host, port := hp, ""
	if i := strings.LastIndexByte(hp, ':'); i >= 0 && !strings.Contains(hp[i:], "]") {
		host, port = hp[:i], hp[i+1:]
	}
	if !strings.HasPrefix(host, "[") && strings.IndexByte(host, ':') >= 0 {
		// A colon in a host not bracketed ("a:1:80"): no host net/http
		// dials. Only lower-cased: normalised, what is host and what
		// port would change from pass to pass.
		return strings.ToLower(hp)
	}
	port = noLeadingZeros(port) // net/http dials ":0443" as port 443
	switch {
	case port == "":
	case port == "80" && strings.EqualFold(scheme, "http"), port == "443" && strings.EqualFold(scheme, "https"):
		port = ""
	}
	host = trimDot(host)
	if !isLowerASCII(host) {
		host = toASCII(host)
	}
	if strings.HasPrefix(host, "[") {
		host = canonicalIP(host)
	}
	if port == "" {
		if len(host) <= len(hostport) && hostport[:len(host)] == host {
			return hostport[:len(host)] // no allocation
		}
		return host
	}
	if len(host)+1+len(port) == len(hostport) && hostport[:len(host)] == host {
		return hostport
	}
	return host + ":" + port
}

// canonicalIP returns a bracketed IPv6 literal in its canonical form
// (RFC 5952: lower case, no leading zeros, the longest run of zeros
// shortened), its zone kept as it is: "[2001:0DB8:0:0:0:0:0:1]" and
// "[2001:db8::1]" are one address, dialed alike; an IPv4-mapped one is
// its IPv4 address ("[::ffff:192.0.2.1]" is "192.0.2.1"). A literal that
// does not parse is returned as it is.
func canonicalIP(host string) string {
	if len(host) < 2 || host[len(host)-1] != ']' {
		return host
	}
	addr, zone, hasZone := strings.Cut(host[1:len(host)-1], "%")
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return host
	}
	if a.Is4In6() && !hasZone {
		return a.Unmap().String() // "[::ffff:192.0.2.1]" is 192.0.2.1
	}
	c := a.String()
	if c == addr {
		return host
	}
	if hasZone {
		return "[" + c + "%" + zone + "]"
	}
	return "[" + c + "]"
}

// trimDot returns host without its trailing dots, or ideographic or
// full-width full stops, which toASCII maps to dots ("api.example。" is
// "api.example." too): all of them, so that a host normalised is normal
// ("api.example.." is "api.example", as "api.example." is; with one left,
// the name of its key, normalised again, was another).
func trimDot(host string) string {
	for trimmed := true; trimmed; {
		trimmed = false
		for _, dot := range [...]string{".", "\u3002", "\uff0e", "\uff61"} {
			if strings.HasSuffix(host, dot) {
				host, trimmed = host[:len(host)-len(dot)], true
			}
		}
	}
	return host
}

// noLeadingZeros returns a port number without its leading zeros ("0"
// for a port of zeros).
func noLeadingZeros(port string) string {
	if len(port) < 2 || port[0] != '0' {
		return port
	}
	if port = strings.TrimLeft(port, "0"); port == "" {
		return "0"
	}
	return port
}

// isNormal reports whether a host[:port] is normal already as far as one
// pass can tell: no port, no trailing dot, no upper case, all ASCII.
func isNormal(hostport string) bool {
	for i := 0; i < len(hostport); i++ {
		if c := hostport[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') || c == ':' {
			return false
		}
	}
	return len(hostport) > 0 && hostport[len(hostport)-1] != '.'
}

// isLowerASCII reports whether s has no upper-case letter and no byte
// beyond ASCII.
func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// LowerASCII returns s lower-cased, as it is when it is already.
func LowerASCII(s string) string {
	if s == "https" || s == "http" || isLowerASCII(s) {
		return s
	}
	return strings.ToLower(s)
}

// toASCII returns host lower-cased, with each label that has a character
// beyond ASCII in its Punycode form ("xn--" and RFC 3492), as IDNA writes
// it. It is a small subset of IDNA (RFC 5891, UTS #46): it lower-cases with
// Unicode's simple case mapping and maps the ideographic full stops to
// dots, but does not normalise to NFC, map other compatibility characters
// or reject disallowed ones. Hosts that differ only in such ways get
// different keys; a host in the same form every time, as URLs usually
// carry, always gets the same one. A bracketed IP literal is returned
// lower-cased, but for its zone (after '%'), an interface name whose case
// counts. "İ" (U+0130), the one character beyond ASCII that the simple
// mapping lower-cases to ASCII but IDNA does not ("i" and a combining dot
// above, U+0307), is mapped as IDNA maps it: "İbm.example" is not
// "ibm.example"; and so is "ẞ" (U+1E9E), which IDNA maps to "ss" where the
// simple mapping gives "ß": "STRAẞE.example" is dialed as
// "strasse.example", and keyed so, not as "straße.example", another host.
func toASCII(host string) string {
	if strings.HasPrefix(host, "[") {
		addr, zone, _ := strings.Cut(host, "%")
		if zone != "" {
			return strings.ToLower(addr) + "%" + zone
		}
		return strings.ToLower(host)
	}
	host = strings.ToLower(strings.NewReplacer("\u0130", "i\u0307", "\u1e9e", "ss").Replace(host))
	if isLowerASCII(host) {
		return host
	}
	host = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".").Replace(host)
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if !isLowerASCII(l) {
			if p, ok := Punycode(l); ok {
				labels[i] = "xn--" + p
			}
		}
	}
	return strings.Join(labels, ".")
}

// Punycode encodes s by RFC 3492 §6.3; false on overflow, and for a
// label of more than 63 characters, which no DNS label encodes (RFC 1035
// §2.3.4): the encoding takes time quadratic in the label's length.
func Punycode(s string) (string, bool) {
	if utf8.RuneCountInString(s) > 63 {
		return "", false
	}
	const (
		base, tmin, tmax = 36, 1, 26
		skew, damp       = 38, 700
		initialBias      = 72
		initialN         = 128
		maxInt           = 1<<31 - 1
	)
	runes := []rune(s)
	var out []byte
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		return k + (base-tmin+1)*delta/(delta+skew)
	}
	n, delta, bias := initialN, 0, initialBias
	for h < len(runes) {
		m := maxInt
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if (m - n) > (maxInt-delta)/(h+1) {
			return "", false
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				if delta++; delta == maxInt {
					return "", false
				}
			}
			if int(r) == n {
				q := delta
				for k := base; ; k += base {
					t := k - bias
					switch {
					case t < tmin:
						t = tmin
					case t > tmax:
						t = tmax
					}
					if q < t {
						break
					}
					out = append(out, digit(t+(q-t)%(base-t)))
					q = (q - t) / (base - t)
				}
				out = append(out, digit(q))
				bias = adapt(delta, h+1, h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return string(out), true
}
