// A small bytecode interpreter, as g++ -O2 builds one: run keeps the
// machine's registers in callee-saved registers, rbp among them, and pops
// them in its epilogues; Machine::step's switch has early returns, each
// with an epilogue of its own. main keeps a frame pointer (alloca), so that
// a walk that takes rbp wrongly finds main's frame wrong.
#include <alloca.h>
#include <cstddef>

namespace {

enum Op : unsigned char { Add, Mul, Xor, Call, Halt };

struct Insn {
	Op op;
	long arg;
};

volatile long sink;

class Machine {
public:
	__attribute__((noinline)) long call(long x)
	{
		sink = x;
		return x * 7 + 1;
	}

	__attribute__((noinline)) bool step(const Insn &in)
	{
		switch (in.op) {
		case Add:
			a_ += in.arg + b_;
			return true;
		case Mul:
			b_ = b_ * in.arg + c_;
			return true;
		case Xor:
			c_ ^= a_ + in.arg;
			return true;
		case Call:
			a_ = call(a_ + in.arg) + b_;
			d_ += call(c_) ^ a_;
			return true;
		case Halt:
			break;
		}
		return false;
	}

	__attribute__((noinline)) long run(const Insn *code, std::size_t n)
	{
		long acc0 = 1, acc1 = 3, acc2 = 5, acc3 = 7, acc4 = 9;
		for (std::size_t pc = 0; pc < n; pc++) {
			if (!step(code[pc]))
				break;
			acc0 += a_;
			acc1 ^= b_ + acc0;
			acc2 += c_ * acc1;
			acc3 ^= d_ - acc2;
			acc4 += acc3 + call(acc0 ^ acc4);
		}
		return acc0 + acc1 + acc2 + acc3 + acc4;
	}

private:
	long a_ = 0, b_ = 1, c_ = 2, d_ = 3;
};

} // namespace

__attribute__((noinline)) long interpret(long n, const long *seed)
{
	const Insn code[] = {{Add, n}, {Mul, seed[0]}, {Call, 1}, {Xor, n}, {Call, 2}, {Halt, 0}};
	Machine m;
	return m.run(code, sizeof code / sizeof code[0]);
}

int main(int argc, char **)
{
	long *keep = static_cast<long *>(alloca(8 * (argc + 2)));
	for (int i = 0; i < argc + 2; i++)
		keep[i] = i + 3;
	sink = interpret(argc, keep) + keep[argc];
	return 0;
}
