int asm_add(int a, int b) { return a + b + 1; }
