// macprof flame graph: zoom and search. Written in ES5 so that any
// browser's SVG viewer runs it; {{W}} is the image width.
var W = {{W}}, P = 10, C = 6.6, HL = 'rgb(230,0,230)';
var frames = [], searchTerm = null, ignoreCase = false, zoomed = null;

// frameName is a frame's function: its tooltip without the counts.
function frameName(g) {
	var t = g.querySelector('title').textContent, k = t.lastIndexOf(' (');
	return k >= 0 ? t.substring(0, k) : t;
}

// fit is the label of a frame w pixels wide, as the Go side computes it.
function fit(n, w) {
	var m = Math.floor((w - 6) / C);
	if (n.length <= m) return n;
	var h = n, k = h.search(/[(\[< ]/);
	if (k >= 0) h = h.substring(0, k);
	k = h.lastIndexOf('/');
	if (k >= 0 && k + 1 < n.length) n = n.substring(k + 1);
	if (n.length <= m) return n;
	if (m < 5) return '';
	return n.substring(0, m - 2) + '..';
}

function place(f, x, w) {
	f.r.setAttribute('x', x);
	f.r.setAttribute('width', w);
	f.t.setAttribute('x', x + 3);
	f.t.textContent = fit(f.n, w);
}

// zoom widens frame f to the full width with its callees, keeps its
// callers (dimmed) and hides the rest. zoom(frames[0]) is the whole graph.
function zoom(f) {
	var s = (W - 2 * P) / f.w;
	for (var i = 0; i < frames.length; i++) {
		var o = frames[i], g = o.g;
		if (o.x <= f.x && o.x + o.w >= f.x + f.w && o.d <= f.d) {
			place(o, P, W - 2 * P);
			g.style.opacity = o === f ? '' : '0.6';
		} else if (o.x >= f.x && o.x + o.w <= f.x + f.w && o.d > f.d) {
			place(o, P + (o.x - f.x) * s, o.w * s);
			g.style.opacity = '';
		} else {
			g.style.display = 'none';
			continue;
		}
		g.style.display = '';
	}
	zoomed = f === frames[0] ? null : f;
	document.getElementById('unzoom').setAttribute('visibility', zoomed ? 'visible' : 'hidden');
}

function resetZoom() {
	if (frames.length) zoom(frames[0]);
}

// matchedSamples is the number of samples under the frames that re
// matches, each counted once however many matched frames nest above it:
// the length of the union of the matched frames' sample ranges.
function matchedSamples(fs, re) {
	var m = [];
	for (var i = 0; i < fs.length; i++) {
		if (re.test(fs[i].n)) m.push(fs[i]);
	}
	m.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
	var n = 0, end = -1;
	for (var j = 0; j < m.length; j++) {
		var s = m[j].x, e = s + m[j].w;
		if (s >= end) {
			n += m[j].w;
			end = e;
		} else if (e > end) {
			n += e - end;
			end = e;
		}
	}
	return n;
}

// percent formats a share as flamegraph.pl does: one decimal, or 100.
function percent(n, total) {
	if (total <= 0) return '0.0';
	var p = 100 * n / total;
	return p === 100 ? '100' : p.toFixed(1);
}

function setText(id, s) {
	document.getElementById(id).textContent = s;
}

// search highlights the frames whose function matches the regular
// expression term and shows the share of samples under them; it returns
// that number of samples, or -1 for a term that is not a regular
// expression.
function search(term) {
	var re;
	try {
		re = new RegExp(term, ignoreCase ? 'i' : '');
	} catch (e) {
		setText('matched', 'Not a regular expression: ' + term);
		return -1;
	}
	searchTerm = term;
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i];
		f.r.setAttribute('fill', re.test(f.n) ? HL : f.fill);
	}
	var n = matchedSamples(frames, re), total = frames.length ? frames[0].w : 0;
	setText('matched', 'Matched: ' + percent(n, total) + '%');
	setText('search', 'Reset Search');
	return n;
}

function resetSearch() {
	for (var i = 0; i < frames.length; i++) frames[i].r.setAttribute('fill', frames[i].fill);
	searchTerm = null;
	setText('matched', ' ');
	setText('search', 'Search');
}

// searchPrompt asks for a term, or resets a search under way.
function searchPrompt() {
	if (searchTerm !== null) {
		resetSearch();
		return;
	}
	var t = prompt('Search frames: a regular expression, e.g. ^runtime\\.' +
		(ignoreCase ? ' (ignoring case)' : '') + '; Ctrl-I toggles case', '');
	if (t) search(t);
}

function toggleCase() {
	ignoreCase = !ignoreCase;
	if (searchTerm !== null) search(searchTerm);
}

function onKey(e) {
	var k = e.key, mod = e.ctrlKey || e.metaKey;
	if ((mod && (k === 'f' || k === 'F')) || k === 'F3' || (k === '/' && !mod)) {
		e.preventDefault();
		searchPrompt();
	} else if (mod && (k === 'i' || k === 'I')) {
		e.preventDefault();
		toggleCase();
	} else if (k === 'Escape' && searchTerm !== null) {
		resetSearch();
	}
}

function init() {
	var gs = document.querySelectorAll('g.f');
	for (var i = 0; i < gs.length; i++) {
		var g = gs[i], r = g.querySelector('rect');
		frames.push({ g: g, r: r, t: g.querySelector('text'), n: frameName(g), fill: r.getAttribute('fill'),
			x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'), d: +g.getAttribute('data-d') });
		g.addEventListener('click', (function (f) {
			return function () { zoom(f); };
		})(frames[i]));
		g.addEventListener('mouseover', function () { setText('details', this.querySelector('title').textContent); });
		g.addEventListener('mouseout', function () { setText('details', ' '); });
	}
	document.getElementById('unzoom').addEventListener('click', resetZoom);
	document.getElementById('search').addEventListener('click', searchPrompt);
	window.addEventListener('keydown', onKey);
}

init();
