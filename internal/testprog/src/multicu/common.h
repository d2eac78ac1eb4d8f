static inline int mix(int a, int b) { return (a * 31) ^ (b >> 2); }
static inline int fold(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += mix(i, s);
	return s;
}
