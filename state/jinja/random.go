package jinja

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"strconv"

	"github.com/brinesalt/brine/internal/ordered"
)

// Random filters: Jinja's random, Salt's random_hash, random_sample and
// random_shuffle (salt/utils/hashutils.py, salt/utils/data.py). With a
// seed, random_sample and random_shuffle are repeatable, though not the
// same sequence as Python's random module gives.

func randomFilters() map[string]filterFunc {
	return map[string]filterFunc{
		"random":         fRandom,
		"random_hash":    fRandomHash,
		"random_sample":  fRandomSample,
		"random_shuffle": fRandomShuffle,
	}
}

func fRandom(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No random item, sequence was empty."}, nil
	}
	return items[rand.IntN(len(items))], nil
}

func fRandomHash(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	size, ok := asInt(v)
	if !ok || size < 0 {
		size = 9999999999
	}
	algo, _ := arg(args, kw, 0, "hash_type", "md5").(string)
	news := map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}
	newHash, ok := news[algo]
	if !ok {
		return nil, runtimeErr("module 'hashlib' has no attribute '%s'", algo)
	}
	h := newHash()
	h.Write([]byte(strconv.Itoa(rand.IntN(size + 1))))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sampler returns a generator seeded from seed when given.
func sampler(seed any) *rand.Rand {
	if seed == nil {
		return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	h := fnv.New64a()
	h.Write([]byte(pyRepr(seed)))
	return rand.New(rand.NewPCG(h.Sum64(), 0))
}

func fRandomSample(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	size, ok := asInt(arg(args, kw, 0, "size", nil))
	if !ok || size < 0 || size > len(items) {
		return nil, runtimeErr("Sample larger than population or is negative")
	}
	return newList(sample(items, size, arg(args, kw, 1, "seed", nil))), nil
}

func fRandomShuffle(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	return newList(sample(items, len(items), arg(args, kw, 0, "seed", nil))), nil
}

func sample(items []any, size int, seed any) []any {
	rng := sampler(seed)
	pool := append([]any{}, items...)
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool[:size]
}
