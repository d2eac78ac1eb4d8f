int fe(int n) { return n * 5 + 1; }
