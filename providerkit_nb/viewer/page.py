"""The views of a Page: the self-contained HTML file, the static HTML a saved notebook keeps, and text.

The file carries every row's card as data (JSON in a ``<script type="application/json">``, with
``<`` written as ``\\u003c`` so no text can close the tag) and a small inline script renders only
the rows on screen, so a session of tens of thousands of messages opens at once. Nothing is
fetched from the network: the file works offline and from disk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .cards import KIND_LABELS, Page, Row, esc
from .style import CSS

__all__ = ["report_html", "write_html", "static_html", "findings_html", "rows_html", "text_summary", "focus_rows"]


def _headline(page: Page) -> str:
    lost = sum(f.kind == "lost_call" for f in page.findings)
    bits = [f"{page.stored:,} messages as stored"]
    if page.changed:
        bits.append(f"{page.sent:,} to send after repair")
    if lost:
        bits.append(f"{lost} lost call(s)")
    bits.append(f"{len(page.findings)} finding(s)")
    if page.errors:
        bits.append(f"{page.errors} tool result(s) were errors")
    fmt = f" ({page.source_format})" if page.source_format and page.source_format not in page.title else ""
    return f'<div class="pk-summary"><b>{esc(page.title)}</b>{esc(fmt)}: {esc("; ".join(bits))}</div>'


def findings_html(page: Page, *, limit: int | None = None) -> str:
    """The summary and the findings, each linking to its card (``#m-<index>``)."""
    out = [_headline(page)]
    facts = [(k, v) for k, v in page.meta.items() if isinstance(v, str | int | float) and not isinstance(v, bool)]
    if facts:  # what the source says about itself: session id, model, working directory, version
        out.append('<div class="pk-lbl">' + " \u00b7 ".join(f"{esc(k)}: {esc(v)}" for k, v in facts[:12]) + "</div>")
    if page.valid:
        out.append(
            '<div class="pk-ok">valid as stored: every call has its result and a provider accepts the '
            "history as it is; nothing to repair.</div>"
        )
    out.append(_hand_back(page))
    items = []
    shown = page.findings if limit is None else page.findings[:limit]
    for f in shown:
        where = f' at <a href="#{page.anchor}m-{f.index}">message #{f.index}</a>' if f.index is not None else ""
        extra = ""
        if f.kind == "lost_call":
            safe = "read-only" if f.read_only else "may have partly run"
            extra = f' <span class="pk-badge">{esc(safe)}</span>'
            if f.wording:
                extra += f'<div class="pk-why">the provider would answer: <q>{esc(f.wording)}</q></div>'
        elif f.wording:
            extra = f'<div class="pk-why">the provider would answer: <q>{esc(f.wording)}</q></div>'
        items.append(
            f'<li id="{esc(f.id)}" class="pk-fk-{esc(f.kind)}"><a href="#{esc(f.id)}" class="pk-idx">{esc(f.id)}</a>'
            f'<span class="pk-badge">{esc(f.kind)}</span> {esc(f.title)}{where}{extra}</li>'
        )
    if limit is not None and len(page.findings) > limit:
        items.append(f"<li>and {len(page.findings) - limit} more</li>")
    if items:
        out.append(f'<ol class="pk-findings">{"".join(items)}</ol>')
    kinds = page.kinds()
    if kinds:
        legend = "".join(f'<span class="pk-badge">{esc(KIND_LABELS.get(k, k))}</span>' for k in kinds)
        out.append(f'<div class="pk-legend pk-lbl">on the rows below: {legend}</div>')
    return "".join(out)


def _hand_back(page: Page) -> str:
    """For a broken coding-agent session: the command that writes the repaired session back for
    the agent to resume (it prints the agent's own resume command)."""
    if page.valid or not page.hand_back:
        return ""
    cmd = page.hand_back
    return (f'<div class="pk-lbl">to hand it back to the agent: <code class="pk-handback" title="click to copy">'
            f"{esc(cmd)}</code> (writes a new session beside the original and prints how to resume it)</div>")


def _row(page: Page, r: Row) -> str:
    if not page.changed:
        return f'<div class="pk-row pk-one">{r.before_html}</div>'
    before = r.before_html or '<div class="pk-empty">not in the stored history (added by repair)</div>'
    after = r.after_html or '<div class="pk-empty">not sent (dropped by repair)</div>'
    return f'<div class="pk-row">{before}{after}</div>'


def _columns(page: Page) -> str:
    if not page.changed:
        return '<div class="pk-cols pk-one"><div>history</div></div>'
    return '<div class="pk-cols"><div>as stored</div><div>as sent after repair</div></div>'


def focus_rows(page: Page, *, context: int = 1, first: int = 3, last: int = 5) -> list[int]:
    """Rows worth showing when not all fit: those with a finding or a change, a little around
    each, and the first and last few."""
    n = len(page.rows)
    keep = set(range(min(first, n))) | set(range(max(0, n - last), n))
    for k, r in enumerate(page.rows):
        if r.kinds:
            keep.update(range(max(0, k - context), min(n, k + context + 1)))
    return sorted(keep)


def rows_html(page: Page, rows: Sequence[int]) -> str:
    """The given rows, with a gap line where rows are left out."""
    out = [_columns(page)]
    prev = -1
    for k in rows:
        if k > prev + 1:
            out.append(f'<div class="pk-gap">{k - prev - 1} message(s) not shown</div>')
        out.append(_row(page, page.rows[k]))
        prev = k
    if prev < len(page.rows) - 1:
        out.append(f'<div class="pk-gap">{len(page.rows) - 1 - prev} message(s) not shown</div>')
    return "".join(out)


def static_html(page: Page, *, max_rows: int = 80) -> str:
    """Findings and cards as plain HTML, no script (what a saved, exported or GitHub-rendered
    notebook shows): the whole history when short, else the rows around the findings."""
    rows = list(range(len(page.rows)))
    if len(rows) > max_rows:
        rows = focus_rows(page)[:max_rows]
    return f'<div class="pk-view"><style>{CSS}</style>{findings_html(page, limit=50)}{rows_html(page, rows)}</div>'


def text_summary(page: Page, *, limit: int = 20) -> str:
    """Plain text: the headline and the findings."""
    lines = [f"{page.title}: {page.stored} messages" + (f", {page.sent} after repair" if page.changed else "")]
    if page.valid:
        lines.append("valid as stored; nothing to repair")
    if page.errors:
        lines.append(f"{page.errors} tool result(s) were errors (shown, not a problem: the model read them)")
    for f in page.findings[:limit]:
        where = f" at message {f.index}" if f.index is not None else ""
        lines.append(f"- {f.kind}{where}: {f.title}")
        if f.told:
            lines.append(f"  the model will read: {f.told}")
    if len(page.findings) > limit:
        lines.append(f"- and {len(page.findings) - limit} more")
    return "\n".join(lines)


def _data(page: Page) -> str:
    rows = [
        {"h": _row(page, r), "s": r.text, "r": r.role, "k": r.kinds, "b": r.before, "a": r.after}
        for r in page.rows
    ]
    text = json.dumps({"rows": rows}, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")  # no "</script>" (or "<!--") can occur inside the tag


_JS = r"""
(function(){
"use strict";
var D=JSON.parse(document.getElementById("pk-data").textContent),R=D.rows,N=R.length;
var list=document.getElementById("pk-list"),topS=document.getElementById("pk-top"),botS=document.getElementById("pk-bot"),
 body=document.getElementById("pk-rows"),bar=document.getElementById("pk-bar"),q=document.getElementById("pk-q"),
 role=document.getElementById("pk-role"),kind=document.getElementById("pk-kind"),count=document.getElementById("pk-count");
var EST=46,OVER=800,H=new Float64Array(N).fill(EST),shown=[],offs=new Float64Array(1),cache=new Map(),first=-1,last=-1;
var byB=new Map(),byA=new Map();
for(var i=0;i<N;i++){if(R[i].b!==null)byB.set(R[i].b,i);if(R[i].a!==null)byA.set(R[i].a,i);}
function layout(){offs=new Float64Array(shown.length+1);for(var k=0;k<shown.length;k++)offs[k+1]=offs[k]+H[shown[k]];}
function find(y){var lo=0,hi=shown.length;while(lo<hi){var m=(lo+hi)>>1;if(offs[m+1]<=y)lo=m+1;else hi=m;}return lo;}
var ro=new ResizeObserver(function(es){var ch=false;es.forEach(function(e){var i=+e.target.dataset.row,h=e.target.offsetHeight;
 if(h&&Math.abs(H[i]-h)>0.5){H[i]=h;ch=true;}});if(ch){layout();place();}});
var S="",RX=null;  // the search: lower-cased text, or a regular expression written /like this/
function spans(l){  // [start, length] of each match in lower-cased text l
 var out=[],p,m;if(RX){RX.lastIndex=0;while((m=RX.exec(l))){if(!m[0].length){RX.lastIndex++;continue;}out.push([m.index,m[0].length]);}}
 else{p=l.indexOf(S);while(p>=0){out.push([p,S.length]);p=l.indexOf(S,p+S.length);}}return out;}
function mark(e){var w=document.createTreeWalker(e,NodeFilter.SHOW_TEXT),ns=[],n;while((n=w.nextNode()))ns.push(n);
 ns.forEach(function(t){var v=t.nodeValue,l=v.toLowerCase();if(l.length!==v.length)return;var hits=spans(l);if(!hits.length)return;
  var f=document.createDocumentFragment(),o=0,m;
  hits.forEach(function(h){f.appendChild(document.createTextNode(v.slice(o,h[0])));m=document.createElement("mark");m.className="pk-mark";
   m.textContent=v.slice(h[0],h[0]+h[1]);f.appendChild(m);o=h[0]+h[1];});
  f.appendChild(document.createTextNode(v.slice(o)));var d=t.parentNode.closest("details");t.parentNode.replaceChild(f,t);
  if(d)d.open=true;});}
function el(i){var e=cache.get(i);if(!e){var t=document.createElement("div");t.innerHTML=R[i].h;e=t.firstElementChild;
 e.dataset.row=i;if(S)mark(e);cache.set(i,e);}return e;}
function place(){topS.style.height=offs[first<0?0:first]+"px";botS.style.height=(offs[shown.length]-offs[last<0?0:last])+"px";}
function render(){
 var y0=window.scrollY-(list.getBoundingClientRect().top+window.scrollY),a=find(Math.max(0,y0-OVER)),
  b=Math.min(shown.length,find(y0+window.innerHeight+OVER)+1);
 if(a===first&&b===last)return;
 var de=document.documentElement,atEnd=b===shown.length&&window.scrollY>0&&window.scrollY+window.innerHeight>=de.scrollHeight-2;
 var want=new Set();for(var k=a;k<b;k++)want.add(shown[k]);
 Array.prototype.slice.call(body.children).forEach(function(c){if(!want.has(+c.dataset.row)){ro.unobserve(c);body.removeChild(c);}});
 var frag=document.createDocumentFragment();
 for(k=a;k<b;k++){var e=el(shown[k]);frag.appendChild(e);ro.observe(e);}
 body.appendChild(frag);first=a;last=b;
 for(k=a;k<b;k++){var h=cache.get(shown[k]).offsetHeight;if(h)H[shown[k]]=h;}
 layout();place();
 if(atEnd&&window.scrollY+window.innerHeight<de.scrollHeight-2){window.scrollTo(0,de.scrollHeight);render();}
}
var pending=false;function soon(){if(!pending){pending=true;requestAnimationFrame(function(){pending=false;render();});}}
function filter(){
 var raw=q.value.trim(),s=raw.toLowerCase(),r=role.value,f=kind.value,hits=0,bad=false;shown=[];
 at=-1;if(s!==S){S=s;RX=null;cache.forEach(function(c){ro.unobserve(c);});cache=new Map();  // cards built again, matches marked
  var end=raw.lastIndexOf("/");if(raw.length>2&&raw[0]==="/"&&end>1){try{RX=new RegExp(raw.slice(1,end),"gi");}catch(e){bad=true;S="";}}}
 for(var i=0;i<N;i++){var x=R[i];if(r&&x.r!==r)continue;if(f==="*"&&!x.k.length)continue;
  if(f&&f!=="*"&&x.k.indexOf(f)<0)continue;if(S){var n=spans(x.s).length;if(!n)continue;hits+=n;}shown.push(i);}
 var of=shown.length.toLocaleString()+" of "+N.toLocaleString()+" messages";
 count.textContent=bad?"not a regular expression: "+raw:S?hits.toLocaleString()+(hits===1?" match in ":" matches in ")+of:(r||f)?of+" match":N.toLocaleString()+" messages";
 first=last=-1;body.textContent="";layout();place();render();
}
var t=0,at=-1;q.addEventListener("input",function(){clearTimeout(t);t=setTimeout(filter,120);});
q.addEventListener("keydown",function(e){  // Enter, Shift+Enter: the next, the previous matching message
 if(e.key!=="Enter")return;e.preventDefault();clearTimeout(t);if(q.value.trim().toLowerCase()!==S)filter();
 if(!shown.length)return;at=(at+(e.shiftKey?-1:1)+shown.length)%shown.length;var x=R[shown[at]];
 history.replaceState(null,"",x.b!==null?"#m-"+x.b:"#a-"+x.a);go();
 count.textContent=(at+1).toLocaleString()+" of "+shown.length.toLocaleString()+" matching messages (Enter, Shift+Enter)";});
role.addEventListener("change",filter);kind.addEventListener("change",filter);
function go(){
 var m=/^#([ma])-(\d+)$/.exec(location.hash);if(!m)return;var i=(m[1]==="m"?byB:byA).get(+m[2]);if(i===undefined)return;
 var k=shown.indexOf(i);if(k<0){q.value="";role.value="";kind.value="";filter();k=shown.indexOf(i);}
 var top=function(){return list.getBoundingClientRect().top+window.scrollY+offs[k]-bar.offsetHeight-4;};
 window.scrollTo(0,top());render();window.scrollTo(0,top());render();
 document.querySelectorAll(".pk-hit").forEach(function(c){c.classList.remove("pk-hit");});
 var c=document.getElementById(m[1]+"-"+m[2]);if(c){c.classList.add("pk-hit");}
}
window.addEventListener("scroll",soon,{passive:true});window.addEventListener("resize",soon);
window.addEventListener("hashchange",go);
document.querySelectorAll(".pk-handback").forEach(function(c){c.addEventListener("click",function(){
 if(navigator.clipboard)navigator.clipboard.writeText(c.textContent).then(function(){c.title="copied";});});});
filter();if(location.hash)go();
window.pkViewer={rows:N,shown:function(){return shown.length;},rendered:function(){return body.children.length;},go:go};
})();
"""

_PAGE_CSS = """
body{margin:0 16px 24px}
#pk-bar{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #d0d7de;padding:6px 0;display:flex;gap:8px;align-items:center;flex-wrap:wrap}
#pk-bar input{flex:1 1 240px;min-width:0;padding:3px 6px;font:inherit}
#pk-bar select{font:inherit}
#pk-count{color:#57606a;font-size:12px}
#pk-rows{overflow-anchor:none}
.pk-mark{background:#fff8c5;outline:1px solid #d4a72c;color:inherit}
"""


def report_html(page: Page) -> str:
    """One self-contained HTML document: findings at the top, then a virtual list of the rows
    with search, filters by role and by finding, and a link per message and per finding."""
    kinds = page.kinds()
    kind_opts = "".join(f'<option value="{esc(k)}">{esc(KIND_LABELS.get(k, k))}</option>' for k in kinds)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{esc(page.title)}</title><style>{CSS}{_PAGE_CSS}</style></head>
<body><div class="pk-view">
{findings_html(page)}
<div id="pk-bar"><input id="pk-q" type="search" placeholder="search text, tool names, call ids; /a regex/" aria-label="search">
<select id="pk-role" aria-label="role"><option value="">every role</option><option value="system">system</option>
<option value="user">user</option><option value="assistant">assistant</option><option value="tool">tool</option></select>
<select id="pk-kind" aria-label="finding"><option value="">every message</option>
<option value="*">with a finding or change</option>{kind_opts}</select><span id="pk-count"></span></div>
{_columns(page)}
<noscript>This page shows its messages with a small inline script; allow scripts for this file.</noscript>
<div id="pk-list"><div id="pk-top"></div><div id="pk-rows"></div><div id="pk-bot"></div></div>
</div>
<script type="application/json" id="pk-data">{_data(page)}</script>
<script>{_JS}</script>
</body></html>
"""


def write_html(page: Page, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(report_html(page), encoding="utf-8")
    return p
