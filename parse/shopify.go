package parse

import "strings"

// This file reads Shopify's X-Shopify-Shop-Api-Call-Limit.

// shopify reads X-Shopify-Shop-Api-Call-Limit: "32/40" is used/bucket, so
// 8 calls remain. The leaky bucket has no
// reset and no window.
// Source: https://shopify.dev/docs/api/admin-rest/usage/rate-limits
func (p *parser) shopify() {
	v, ok := single(p.get(sShopify))
	if !ok {
		return
	}
	u, b, ok := strings.Cut(v, "/")
	used, bucket := count(u), count(b)
	if !ok || used < 0 || bucket < 0 {
		return
	}
	q := newQuota("shopify")
	q.Limit, q.Remaining = bucket, max(bucket-used, 0)
	p.add(q)
}
