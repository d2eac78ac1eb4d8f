// Runs a flame graph's inline script in node against a small DOM built from
// the SVG (as parsed by the Go test), performs the test's actions, and
// prints what each observed, as JSON. Reads {tree, script, actions} on
// standard input. Test-only: the SVG's script is the code under test.
'use strict';
const vm = require('vm');

class Element {
	constructor(node, parent) {
		this.tag = node.name;
		this.attrs = Object.assign({}, node.attrs);
		this.parent = parent;
		this.children = [];
		this.text = node.text || '';
		this.style = { display: '', opacity: '' };
		this.listeners = {};
		for (const c of node.children || []) this.children.push(new Element(c, this));
	}
	getAttribute(k) { return k in this.attrs ? String(this.attrs[k]) : null; }
	setAttribute(k, v) { this.attrs[k] = String(v); }
	get textContent() { return this.text + this.children.map(c => c.textContent).join(''); }
	set textContent(v) { this.text = String(v); this.children = []; }
	addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
	dispatch(type, ev) { for (const fn of this.listeners[type] || []) fn.call(this, ev); }
	*walk() { for (const c of this.children) { yield c; yield* c.walk(); } }
	// Selectors the script uses: a tag name, or tag.class.
	matches(sel) {
		const [tag, cls] = sel.split('.');
		return this.tag === tag && (!cls || (this.attrs['class'] || '').split(' ').includes(cls));
	}
	querySelector(sel) { for (const e of this.walk()) if (e.matches(sel)) return e; return null; }
	querySelectorAll(sel) { return [...this.walk()].filter(e => e.matches(sel)); }
}

const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const root = new Element(input.tree, null);
const windowListeners = {};
let promptAnswer = null, prompts = 0;
const document = {
	documentElement: root,
	querySelectorAll: s => root.querySelectorAll(s),
	querySelector: s => root.querySelector(s),
	getElementById: id => { for (const e of root.walk()) if (e.attrs.id === id) return e; return null; },
};
const window = { addEventListener: (t, fn) => { (windowListeners[t] = windowListeners[t] || []).push(fn); } };
const ctx = vm.createContext({ document, window, prompt: () => { prompts++; return promptAnswer; }, console });
vm.runInContext(input.script, ctx, { filename: 'flamegraph.js' });

const gs = root.querySelectorAll('g.f');
function state() {
	return {
		frames: gs.map(g => {
			const r = g.querySelector('rect');
			return { fill: r.getAttribute('fill'), x: +r.getAttribute('x'), width: +r.getAttribute('width'),
				display: g.style.display, opacity: g.style.opacity, label: g.querySelector('text').textContent };
		}),
		matched: document.getElementById('matched').textContent,
		search: document.getElementById('search').textContent,
		unzoom: document.getElementById('unzoom').getAttribute('visibility'),
		details: document.getElementById('details').textContent,
		prompts,
	};
}

const out = [];
for (const a of input.actions) {
	switch (a.op) {
	case 'state': out.push(state()); break;
	case 'search': out.push(vm.runInContext('search(' + JSON.stringify(a.arg) + ')', ctx)); break;
	case 'resetSearch': vm.runInContext('resetSearch()', ctx); out.push(null); break;
	case 'click': gs[a.frame].dispatch('click', {}); out.push(null); break;
	case 'hover': gs[a.frame].dispatch('mouseover', {}); out.push(null); break;
	case 'clickId': document.getElementById(a.id).dispatch('click', {}); out.push(null); break;
	case 'key': {
		promptAnswer = a.answer === undefined ? null : a.answer;
		let prevented = false;
		const ev = { key: a.key, ctrlKey: !!a.ctrl, metaKey: !!a.meta, preventDefault: () => { prevented = true; } };
		for (const fn of windowListeners.keydown || []) fn(ev);
		out.push(prevented);
		break;
	}
	case 'eval': out.push(vm.runInContext(a.arg, ctx)); break;
	default: throw new Error('unknown action ' + a.op);
	}
}
process.stdout.write(JSON.stringify(out));
