// objc.m: the Objective-C fixture: a root class, so no Foundation is needed.
volatile int objc_sink;

__attribute__((objc_root_class))
@interface Widget {
	int count;
}
- (int)spin:(int)n;
- (int)spin:(int)n times:(int)k;
+ (int)make;
@end

@implementation Widget
- (int)spin:(int)n { objc_sink = n; return n * 2 + count; }
- (int)spin:(int)n times:(int)k { objc_sink = k; return n * k + count; }
+ (int)make { objc_sink = 3; return 3; }
@end

int main(void) { return objc_sink; }
