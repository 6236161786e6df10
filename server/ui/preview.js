// The H.264 preview: GET /preview/h264 is a WebSocket sending a config
// (the codec and its AVCDecoderConfigurationRecord) and then the frames
// as AVCC access units, each after the server's receive time; WebCodecs
// decodes them onto a canvas. app.js chooses between it and MJPEG.
"use strict";

const video = {
  ws: null,
  decoder: null,
  decoded: 0,     // frames drawn since the page loaded (tests count them)
  latency: 0,     // ms from the server's receipt of the last frame to its drawing
  sent: new Map(),// chunk timestamp -> the server's receive time
  seq: 0,
  failed: null,   // onFail of the stream in use
};
window.apexPreview = video;

// h264Supported probes WebCodecs: whether this browser decodes baseline
// H.264 at all.
async function h264Supported() {
  if (typeof VideoDecoder === "undefined") return false;
  try {
    const r = await VideoDecoder.isConfigSupported({ codec: "avc1.42E01F", optimizeForLatency: true });
    return !!r.supported;
  } catch (e) {
    return false;
  }
}

// startH264 streams the screen onto canvas. onFail(reason, refused) is
// called once when the stream stops working: refused when the server
// says the device has no H.264 stream.
function startH264(canvas, onFail) {
  stopH264();
  const ctx2d = canvas.getContext("2d");
  const ws = new WebSocket(wsURL("/preview/h264"));
  ws.binaryType = "arraybuffer";
  video.ws = ws;
  let done = false;
  const fail = (reason, refused) => {
    if (done || video.ws !== ws) return;
    done = true;
    stopH264();
    onFail(reason, refused);
  };
  const newDecoder = () => new VideoDecoder({
    output: (frame) => {
      if (canvas.width !== frame.displayWidth || canvas.height !== frame.displayHeight) {
        canvas.width = frame.displayWidth;
        canvas.height = frame.displayHeight;
      }
      ctx2d.drawImage(frame, 0, 0);
      const at = video.sent.get(frame.timestamp);
      if (at !== undefined) {
        video.latency = performance.timeOrigin + performance.now() - at;
        video.sent.delete(frame.timestamp);
      }
      frame.close();
      video.decoded++;
      canvas.hidden = false;
    },
    error: (e) => fail("decoding failed: " + e.message, false),
  });
  ws.onmessage = (ev) => {
    const b = new Uint8Array(ev.data);
    if (b[0] === 1) {
      const n = b[1];
      const codec = new TextDecoder().decode(b.subarray(2, 2 + n));
      if (!video.decoder || video.decoder.state === "closed") video.decoder = newDecoder();
      video.decoder.configure({ codec, description: b.slice(2 + n), optimizeForLatency: true });
      return;
    }
    if (!video.decoder || video.decoder.state !== "configured") return;
    const at = new DataView(b.buffer, b.byteOffset + 1, 8).getFloat64(0);
    const ts = ++video.seq * 1000;
    video.sent.set(ts, at);
    if (video.sent.size > 256) video.sent.delete(video.sent.keys().next().value);
    video.decoder.decode(new EncodedVideoChunk({ type: b[0] === 2 ? "key" : "delta", timestamp: ts, data: b.subarray(9) }));
  };
  ws.onclose = (ev) => {
    if (ev.code === 4409) fail(ev.reason || "the device streams no H.264", true);
    else fail(ev.reason || "the stream closed (" + ev.code + ")", false);
  };
}

function stopH264() {
  const ws = video.ws;
  video.ws = null;
  if (ws) {
    ws.onclose = ws.onmessage = null;
    ws.close();
  }
  if (video.decoder && video.decoder.state !== "closed") video.decoder.close();
  video.decoder = null;
  video.sent.clear();
}

// surface is the element showing the screen now (the MJPEG image or the
// H.264 canvas), or null; shown says whether it shows a frame yet.
video.surface = () => {
  const img = document.getElementById("screen"), canvas = document.getElementById("screen-video");
  const rtcVideo = document.getElementById("screen-rtc"); // webrtc.js
  if (rtcVideo && !rtcVideo.hidden) return rtcVideo;
  if (!canvas.hidden) return canvas;
  return img.hidden ? null : img;
};
video.shown = () => {
  const s = video.surface();
  if (s && s.tagName === "VIDEO") return window.apexRTC.frames > 0;
  return !!s && (s.tagName === "CANVAS" ? video.decoded > 0 : s.complete && s.naturalWidth > 0);
};

// supervised shows a supervised process's crash or restart from the
// event stream (a "supervisor" event: the simulated phone, its ffmpeg):
// what crashed, how, and when it restarts; then that it is back.
video.supervised = (s) => {
  const msg = document.getElementById("preview-msg");
  clearTimeout(video.supervisedTimer);
  if (s.kind === "exited") {
    msg.textContent = s.text;
    msg.dataset.supervisor = "exited";
    return;
  }
  msg.textContent = `${s.name} restarted (run ${s.run})`;
  msg.dataset.supervisor = "started";
  video.supervisedTimer = setTimeout(() => {
    if (msg.dataset.supervisor === "started") {
      msg.textContent = "";
      delete msg.dataset.supervisor;
    }
  }, 5000);
};
