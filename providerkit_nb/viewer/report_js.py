"""The HTML file's one inline script: search, filters, stepping through matches, links and print.

Two modes, one behaviour. A page under ``page.ALL_ROWS`` messages holds every row in the
document (``#pk-rows.pk-all``, each row numbered in ``data-row``): the script only hides rows a
filter leaves out and marks matches as rows come into view. A longer page carries its rows as
JSON (``#pk-data``) and the script draws only the rows on screen (a virtual list whose row
heights are measured as they are drawn), drawing all of them for print.

Keys: ``/`` focuses the search, Enter or F3 steps to the next match (Shift: the previous one),
Escape clears it. Each match is marked; the current one stands out and is scrolled into view,
its folded block opened. A search written ``/like this/`` is a regular expression.
"""

JS = r"""
(function(){
"use strict";
document.documentElement.classList.add("pk-js");
var dataEl=document.getElementById("pk-data"),VIRTUAL=!!dataEl;
var list=document.getElementById("pk-list"),body=document.getElementById("pk-rows"),bar=document.getElementById("pk-bar"),
 q=document.getElementById("pk-q"),role=document.getElementById("pk-role"),kind=document.getElementById("pk-kind"),
 count=document.getElementById("pk-count");
if(!body)return;
var R=[];
if(VIRTUAL){R=JSON.parse(dataEl.textContent).rows;}
else{Array.prototype.forEach.call(body.querySelectorAll(":scope>.pk-row"),function(e){var d=e.dataset;
 R.push({e:e,r:d.r,k:d.k?d.k.split(" "):[],b:d.b===""?null:+d.b,a:d.a===""?null:+d.a});});}
var N=R.length,byB=new Map(),byA=new Map();
for(var i=0;i<N;i++){if(R[i].b!==null)byB.set(R[i].b,i);if(R[i].a!==null)byA.set(R[i].a,i);}
var ENT={amp:"&",lt:"<",gt:">",quot:"\""};
function decode(s){return s.replace(/&(?:(amp|lt|gt|quot)|#(x[0-9a-f]+|\d+));/gi,function(m,n,c){
 return n?ENT[n.toLowerCase()]:String.fromCodePoint(c[0]==="x"||c[0]==="X"?parseInt(c.slice(1),16):+c);});}
function txt(i){var x=R[i];if(x.t===undefined){x.t=VIRTUAL?decode(x.h.replace(/<\/(?:div|p|li|pre|summary|h\d|tr|td|th)>|<br\s*\/?>/g,"\n")
 .replace(/<[^>]*>/g,"")).toLowerCase():x.e.textContent.toLowerCase();}return x.t;}

// ---------------------------------------------------------------- search and marks
var S="",RX=null,SK=0;  // the search (lower-cased text, or a regular expression written /like this/); its key
function spans(l){var out=[],p,m;if(RX){RX.lastIndex=0;while((m=RX.exec(l))){if(!m[0].length){RX.lastIndex++;continue;}
 out.push([m.index,m[0].length]);}}else if(S){p=l.indexOf(S);while(p>=0){out.push([p,S.length]);p=l.indexOf(S,p+S.length);}}return out;}
function unmark(e){e.querySelectorAll("mark.pk-mark").forEach(function(m){m.replaceWith(document.createTextNode(m.textContent));});e.normalize();}
function mark(e){if(+e.dataset.pkm===SK)return;if(e.dataset.pkm)unmark(e);e.dataset.pkm=SK;if(!S)return;
 var w=document.createTreeWalker(e,NodeFilter.SHOW_TEXT),ns=[],n;while((n=w.nextNode()))ns.push(n);
 ns.forEach(function(t){var v=t.nodeValue,l=v.toLowerCase();if(l.length!==v.length)return;var hits=spans(l);if(!hits.length)return;
  var f=document.createDocumentFragment(),o=0,m;
  hits.forEach(function(h){f.appendChild(document.createTextNode(v.slice(o,h[0])));m=document.createElement("mark");m.className="pk-mark";
   m.textContent=v.slice(h[0],h[0]+h[1]);f.appendChild(m);o=h[0]+h[1];});
  f.appendChild(document.createTextNode(v.slice(o)));var d=t.parentNode.closest("details");t.parentNode.replaceChild(f,t);
  if(d)d.open=true;});}

// ---------------------------------------------------------------- rows: all in the page, or drawn on scroll
var shown=[],hits=[],hitRows=[],at={p:-1,j:0},cache=new Map(),first=-1,last=-1;
var EST=46,OVER=800,H=VIRTUAL?new Float64Array(N).fill(EST):null,offs=new Float64Array(1),topS=document.getElementById("pk-top"),
 botS=document.getElementById("pk-bot");
function el(i){if(!VIRTUAL)return R[i].e;var e=cache.get(i);if(!e){var t=document.createElement("div");t.innerHTML=R[i].h;e=t.firstElementChild;
 e.dataset.row=i;cache.set(i,e);}return e;}
var io=VIRTUAL?null:new IntersectionObserver(function(es){es.forEach(function(x){if(x.isIntersecting&&S)mark(x.target);});},{rootMargin:"600px"});
if(io)R.forEach(function(x){io.observe(x.e);});
function layout(){offs=new Float64Array(shown.length+1);for(var k=0;k<shown.length;k++)offs[k+1]=offs[k]+H[shown[k]];}
function find(y){var lo=0,hi=shown.length;while(lo<hi){var m=(lo+hi)>>1;if(offs[m+1]<=y)lo=m+1;else hi=m;}return lo;}
var ro=VIRTUAL?new ResizeObserver(function(es){var ch=false;es.forEach(function(e){var i=+e.target.dataset.row,h=e.target.offsetHeight;
 if(h&&Math.abs(H[i]-h)>0.5){H[i]=h;ch=true;}});if(ch){layout();place();}}):null;
function place(){topS.style.height=offs[first<0?0:first]+"px";botS.style.height=(offs[shown.length]-offs[last<0?0:last])+"px";}
var printing=false;
function render(){
 if(!VIRTUAL||printing)return;
 var y0=window.scrollY-(list.getBoundingClientRect().top+window.scrollY),a=find(Math.max(0,y0-OVER)),
  b=Math.min(shown.length,find(y0+window.innerHeight+OVER)+1);
 if(a===first&&b===last)return;
 var de=document.documentElement,atEnd=b===shown.length&&window.scrollY>0&&window.scrollY+window.innerHeight>=de.scrollHeight-2;
 var want=new Set();for(var k=a;k<b;k++)want.add(shown[k]);
 Array.prototype.slice.call(body.children).forEach(function(c){if(!want.has(+c.dataset.row)){ro.unobserve(c);body.removeChild(c);}});
 var frag=document.createDocumentFragment();
 for(k=a;k<b;k++){var e=el(shown[k]);mark(e);frag.appendChild(e);ro.observe(e);}
 body.appendChild(frag);first=a;last=b;
 for(k=a;k<b;k++){var h=el(shown[k]).offsetHeight;if(h)H[shown[k]]=h;}
 layout();place();
 if(atEnd&&window.scrollY+window.innerHeight<de.scrollHeight-2){window.scrollTo(0,de.scrollHeight);render();}
}
var pending=false;function soon(){if(!pending){pending=true;requestAnimationFrame(function(){pending=false;render();});}}
function filter(){
 var raw=q.value.trim(),s=raw.toLowerCase(),r=role.value,f=kind.value,total=0,bad=false;
 if(s!==S||RX&&raw!==RX.src){S=s;RX=null;SK++;var end=raw.lastIndexOf("/");
  if(raw.length>2&&raw[0]==="/"&&end>1){try{RX=new RegExp(raw.slice(1,end),"gi");RX.src=raw;}catch(e){bad=true;S="";}}}
 shown=[];hits=[];hitRows=[];at={p:-1,j:0};
 for(var i=0;i<N;i++){var x=R[i],ok=!(r&&x.r!==r)&&!(f==="*"&&!x.k.length)&&!(f&&f!=="*"&&x.k.indexOf(f)<0),n=0;
  if(ok&&S){n=spans(txt(i)).length;ok=n>0;}
  if(ok){shown.push(i);if(n){hitRows.push(i);hits.push(n);total+=n;}}
  if(!VIRTUAL&&x.e.hidden===ok)x.e.hidden=!ok;}
 var of=shown.length.toLocaleString()+" of "+N.toLocaleString()+" messages";
 count.textContent=bad?"not a regular expression: "+raw:S?total.toLocaleString()+(total===1?" match in ":" matches in ")+of:(r||f)?of+" match":N.toLocaleString()+" messages";
 if(VIRTUAL){cache.forEach(function(c){ro.unobserve(c);});cache=new Map();first=last=-1;body.textContent="";layout();place();render();}
 else{document.querySelectorAll("mark.pk-cur").forEach(function(m){m.classList.remove("pk-cur");});
  if(S)R.forEach(function(x){var b=x.e.getBoundingClientRect();if(!x.e.hidden&&b.bottom>-600&&b.top<window.innerHeight+600)mark(x.e);});
  else R.forEach(function(x){if(x.e.dataset.pkm)mark(x.e);});}
}
function bring(i){  // the row on screen (drawn, in a long page)
 if(!VIRTUAL)return el(i);var k=shown.indexOf(i);if(k<0)return null;
 var top=function(){return list.getBoundingClientRect().top+window.scrollY+offs[k]-bar.offsetHeight-4;};
 window.scrollTo(0,top());render();window.scrollTo(0,top());render();return el(i);}
function reveal(e){for(var d=e.parentElement;d;d=d.parentElement){if(d.tagName==="DETAILS")d.open=true;}}
function select(e,m){document.querySelectorAll(".pk-mark.pk-cur,.pk-hit").forEach(function(c){c.classList.remove("pk-cur");c.classList.remove("pk-hit");});
 var t=m||e;reveal(t);if(m)m.classList.add("pk-cur");else e.classList.add("pk-hit");t.scrollIntoView({block:m?"center":"start"});}
function step(dir){
 if(!hitRows.length)return;
 var p=at.p,j=at.j+dir,tries=0,before=0;
 if(p<0){p=dir>0?0:hitRows.length-1;j=dir>0?0:Infinity;}
 while(tries++<=hitRows.length){
  var e=bring(hitRows[p]);mark(e);var ms=e.querySelectorAll("mark.pk-mark");
  if(j===Infinity)j=ms.length-1;
  if((j>=0&&j<ms.length)||(!ms.length&&(j===0||j===-1))){
   select(e,ms.length?ms[j]:null);at={p:p,j:Math.max(j,0)};
   for(var k=0;k<p;k++)before+=hits[k];var total=hits.reduce(function(a,b){return a+b;},0);
   count.textContent="match "+Math.min(total,before+at.j+1).toLocaleString()+" of "+total.toLocaleString()+" in "+
    hitRows.length.toLocaleString()+" message(s) (Enter or F3: next; Shift: previous; Esc: clear)";return;}
  p=(p+dir+hitRows.length)%hitRows.length;j=dir>0?0:Infinity;}
}
function sync(){clearTimeout(t);var raw=q.value.trim();if(raw.toLowerCase()!==S&&!(RX&&RX.src===raw))filter();}
var t=0;q.addEventListener("input",function(){clearTimeout(t);t=setTimeout(filter,150);});
q.addEventListener("keydown",function(e){if(e.key==="Enter"){e.preventDefault();sync();step(e.shiftKey?-1:1);}});
document.getElementById("pk-next").addEventListener("click",function(){sync();step(1);});
document.getElementById("pk-prev").addEventListener("click",function(){sync();step(-1);});
document.addEventListener("keydown",function(e){
 var x=e.target,typing=x&&(x.tagName==="INPUT"||x.tagName==="TEXTAREA"||x.tagName==="SELECT"||x.isContentEditable);
 if(e.key==="/"&&!typing&&!e.ctrlKey&&!e.metaKey&&!e.altKey){e.preventDefault();q.focus();q.select();return;}
 if(e.key==="F3"&&q.value.trim()){e.preventDefault();sync();step(e.shiftKey?-1:1);return;}
 if(e.key==="Escape"&&(x===q||q.value)){e.preventDefault();q.value="";sync();if(x===q)q.blur();}});
role.addEventListener("change",filter);kind.addEventListener("change",filter);

// ---------------------------------------------------------------- links
function go(){
 var id=decodeURIComponent(location.hash.slice(1));if(!id)return;sync();
 var m=/^([ma])-(\d+)$/.exec(id),i=m?(m[1]==="m"?byB:byA).get(+m[2]):undefined;
 if(i===undefined&&VIRTUAL&&!document.getElementById(id)){var needle='id="'+id+'"';for(var k=0;k<N;k++){if(R[k].h.indexOf(needle)>=0){i=k;break;}}}
 if(i!==undefined&&shown.indexOf(i)<0){q.value="";role.value="";kind.value="";filter();}
 if(i!==undefined)bring(i);
 var target=document.getElementById(id)||(i!==undefined?el(i):null);if(!target)return;
 select(target,null);
}
window.addEventListener("hashchange",go);
if(VIRTUAL){window.addEventListener("scroll",soon,{passive:true});window.addEventListener("resize",soon);}

// ---------------------------------------------------------------- print: every message, folds open
var closed=[];
window.addEventListener("beforeprint",function(){
 closed=Array.prototype.filter.call(document.querySelectorAll(".pk-view details:not([open])"),function(d){d.open=true;return true;});
 if(VIRTUAL){printing=true;body.textContent="";topS.style.height=botS.style.height="0px";var f=document.createDocumentFragment();
  shown.forEach(function(i){f.appendChild(el(i));});body.appendChild(f);
  body.querySelectorAll("details:not([open])").forEach(function(d){d.open=true;closed.push(d);});}});
window.addEventListener("afterprint",function(){closed.forEach(function(d){d.open=false;});closed=[];
 if(VIRTUAL){printing=false;first=last=-1;body.textContent="";render();}});
document.querySelectorAll(".pk-handback").forEach(function(c){c.addEventListener("click",function(){
 if(navigator.clipboard)navigator.clipboard.writeText(c.textContent).then(function(){c.title="copied";});});});
filter();if(location.hash)go();
window.pkViewer={rows:N,virtual:VIRTUAL,shown:function(){return shown.length;},
 rendered:function(){return VIRTUAL?body.children.length:shown.length;},go:go,step:step};
})();
"""
