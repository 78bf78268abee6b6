// Two spellings of a concatenation that compile fast, which the CXXRTL flow writes in
// place of the long chains Yosys writes (sim/cxxrtl.py, rtlil_to_sources): a chain of
// `.concat()` nests one value type in the next, and Clang's optimiser slows down badly
// on a chain of hundreds (docs/cosim.md, "Compiler").
#ifndef TMA_CONCAT
#define TMA_CONCAT

// A value repeated Count times, as a balanced tree of concatenations (Yosys' chain of
// Count - 1 concatenations of one value: a memory's write data over its byte lanes).
template<size_t Count>
struct tma_repeat {
	template<size_t Bits>
	static cxxrtl::value<Bits * Count> of(const cxxrtl::value<Bits> &v) {
		return tma_repeat<Count / 2>::of(v).concat(tma_repeat<Count - Count / 2>::of(v));
	}
};

template<>
struct tma_repeat<1> {
	template<size_t Bits>
	static cxxrtl::value<Bits> of(const cxxrtl::value<Bits> &v) { return v; }
};

// The bits of `from` that `map` names, bit i of the result from bit map[i] (Yosys' chain
// of slices and repeats of one value: a memory's byte-lane enables spread over the bits
// of each lane), in a loop.
template<size_t Width, size_t Bits>
cxxrtl::value<Width> tma_gather(const cxxrtl::value<Bits> &from, const uint16_t (&map)[Width]) {
	constexpr size_t chunk = cxxrtl::value<Width>::chunk::bits;
	cxxrtl::value<Width> out;
	for (size_t i = 0; i < Width; i++)
		out.data[i / chunk] |= ((from.data[map[i] / chunk] >> (map[i] % chunk)) & 1u) << (i % chunk);
	return out;
}

#endif
