// interp: a tree-walking interpreter built with g++ -O2 (no frame pointers): the
// "g++ -O2 interpreter" of issue 28, whose samples must reach main.
#include <vector>
#include <string>
#include <map>
#include <cstdio>
#include <memory>
struct Node { virtual ~Node(){} virtual long eval(std::map<std::string,long>& env) const = 0; };
struct Num: Node { long v; Num(long v):v(v){} long eval(std::map<std::string,long>&) const override { return v; } };
struct Var: Node { std::string n; Var(std::string n):n(n){} long eval(std::map<std::string,long>& e) const override { return e[n]; } };
struct Bin: Node { char op; std::unique_ptr<Node> l, r; Bin(char o, Node* a, Node* b):op(o),l(a),r(b){}
  long eval(std::map<std::string,long>& e) const override { long a=l->eval(e), b=r->eval(e); switch(op){case '+':return a+b;case '*':return a*b;case '-':return a-b;default:return b?a%b:0;} } };
struct Loop: Node { std::string v; long n; std::unique_ptr<Node> body; Loop(std::string v,long n,Node* b):v(v),n(n),body(b){}
  long eval(std::map<std::string,long>& e) const override { long s=0; for(long i=0;i<n;i++){ e[v]=i; s+=body->eval(e);} return s; } };
int main(int argc,char**argv){ long n = argc>1? atol(argv[1]) : 3000000;
  std::unique_ptr<Node> p(new Loop("i", n, new Bin('+', new Bin('*', new Var("i"), new Num(3)), new Bin('%', new Var("i"), new Bin('+', new Var("j"), new Num(7))))));
  std::map<std::string,long> env; env["j"]=5; long s=0; for(int k=0;k<4;k++) s+=p->eval(env); printf("%ld\n", s); }
