// For symbolize's oracle tests, built with g++ -O2 -g: geo::measure
// inlines a template method (Vec<int>::dot) and a static function (area).
#include <cstdio>
#include <cstdlib>

namespace geo {
template <typename T> struct Vec {
	T x, y;
	T dot(const Vec &o) const { return x * o.x + y * o.y; }
};
static inline int area(int w) { return w * w + 1; }
__attribute__((noinline)) int measure(const Vec<int> &v, int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += v.dot(Vec<int>{i, n}) ^ area(i);
	return s;
}
} // namespace geo

int main(int argc, char **argv) {
	geo::Vec<int> v{argc, 3};
	std::printf("%d\n", geo::measure(v, argc > 1 ? std::atoi(argv[1]) : 7));
	return 0;
}
