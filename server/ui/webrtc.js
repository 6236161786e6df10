// The WebRTC preview: a host locked to WebRTC says so in /runtime-info
// (previewTransport; its H.264 WebSocket's address answers 409 naming
// "webrtc" to other clients); the page then posts its
// whole offer (ICE gathered first, no trickle) to /preview/webrtc, gets the
// whole answer, and shows the screen's H.264 track in a <video>. app.js's
// choosePreview chooses it.
"use strict";

const rtc = {
  pc: null,
  frames: 0, // frames presented since the page loaded (tests count them)
};
window.apexRTC = rtc;

// previewLock is the transport the host insists on ("webrtc"), or "", as
// GET /runtime-info says: the page's first answer (app.js keeps it in
// ui.info), asked here only when the session came over the event stream
// first.
async function previewLock() {
  try {
    const info = ui.info || (ui.info = await api("GET", "/runtime-info"));
    return info.previewTransport === "webrtc" ? "webrtc" : "";
  } catch (e) {
    return ""; // the WebSocket will say what is wrong
  }
}

// rtcVideo is the <video> the track plays in, made on first use beside the
// other surfaces, and mapped to taps like them (bindSurface, app.js).
function rtcVideo() {
  let v = document.getElementById("screen-rtc");
  if (v) return v;
  v = document.createElement("video");
  v.id = "screen-rtc";
  v.muted = v.autoplay = v.playsInline = true;
  v.hidden = true;
  v.setAttribute("aria-label", "The device's screen");
  document.getElementById("screen-box").insertBefore(v, document.getElementById("touch"));
  bindSurface(v);
  const count = () => { rtc.frames++; v.requestVideoFrameCallback(count); };
  v.requestVideoFrameCallback(count);
  return v;
}

// startWebRTC plays the screen; onFail(reason) is called once when it
// cannot start or stops working.
async function startWebRTC(onFail) {
  stopWebRTC();
  const v = rtcVideo();
  const pc = new RTCPeerConnection();
  rtc.pc = pc;
  let done = false;
  const fail = (reason) => {
    if (done || rtc.pc !== pc) return;
    done = true;
    stopWebRTC();
    onFail(reason);
  };
  pc.addTransceiver("video", { direction: "recvonly" });
  pc.ontrack = (ev) => {
    v.srcObject = ev.streams[0] || new MediaStream([ev.track]);
    v.hidden = false;
    v.play().catch(() => {});
  };
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === "failed" || pc.connectionState === "closed") fail("the WebRTC connection " + pc.connectionState);
  };
  try {
    await pc.setLocalDescription(await pc.createOffer());
    if (pc.iceGatheringState !== "complete") {
      await new Promise((resolve) => {
        pc.addEventListener("icegatheringstatechange", () => { if (pc.iceGatheringState === "complete") resolve(); });
      });
    }
    const res = await fetch(url("/preview/webrtc"), {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ type: pc.localDescription.type, sdp: pc.localDescription.sdp }),
    });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || res.status + " " + res.statusText);
    if (rtc.pc !== pc) return;
    await pc.setRemoteDescription(data);
  } catch (e) {
    fail("WebRTC: " + e.message);
  }
}

function stopWebRTC() {
  const pc = rtc.pc;
  rtc.pc = null;
  if (pc) pc.close();
  const v = document.getElementById("screen-rtc");
  if (v) {
    v.srcObject = null;
    v.hidden = true;
  }
}
