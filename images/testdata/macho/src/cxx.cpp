// cxx.cpp: the C++ fixture, for demangling (no C++ library is linked).
volatile int cxx_sink;

namespace geo {
template <typename T> struct Vec {
	T x, y;
	__attribute__((noinline)) T dot(const Vec &o) const { cxx_sink = 1; return x * o.x + y * o.y; }
};

class Shape {
public:
	__attribute__((noinline)) int area(int scale) const { cxx_sink = scale; return scale * side_ * side_; }
	int side_ = 3;
};

__attribute__((noinline)) int measure(const Shape &s, int k) { return s.area(k) + 1; }
__attribute__((noinline)) int measure(const Shape &s, double k) { return s.area(int(k)) + 2; }
} // namespace geo

template <int N> __attribute__((noinline)) int unroll(int v) { cxx_sink = v; return unroll<N - 1>(v + N); }
template <> __attribute__((noinline)) int unroll<0>(int v) { return v; }

extern "C" int main() {
	geo::Vec<int> a{1, 2}, b{3, 4};
	geo::Vec<double> c{1.5, 2.5};
	geo::Shape s;
	return a.dot(b) + int(c.dot(c)) + geo::measure(s, 2) + geo::measure(s, 2.5) + unroll<8>(cxx_sink);
}
