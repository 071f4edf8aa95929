/**
 * The pointer on a graph canvas (the replay's and the neighbourhood's): wheel to zoom, drag to pan,
 * double-click to fit, hover for a tooltip, and a click on a node picks it (`onPick`).
 */
import { useEffect, type RefObject } from "react";
import type { ReplayEngine } from "./engine";

export interface Hover {
  node: number;
  x: number;
  y: number;
}

export function useCanvasPointer(
  canvasRef: RefObject<HTMLCanvasElement | null>,
  engineRef: RefObject<ReplayEngine | null>,
  setHover: (hover: Hover | null) => void,
  onPick?: (node: number) => void,
) {
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    let drag: { x: number; y: number } | null = null;
    let hovered = -1;
    const local = (event: MouseEvent) => {
      const rect = canvas.getBoundingClientRect();
      return { x: event.clientX - rect.left, y: event.clientY - rect.top };
    };
    const wheel = (event: WheelEvent) => {
      event.preventDefault();
      const { x, y } = local(event);
      engineRef.current?.renderer.zoomAt(x, y, event.deltaY < 0 ? 1.15 : 1 / 1.15);
    };
    let pressed: { x: number; y: number } | null = null;
    const down = (event: PointerEvent) => {
      drag = local(event);
      pressed = drag;
    };
    const up = (event: PointerEvent) => {
      drag = null;
      // A press and release in (nearly) one place over a node picks it (a drag does not).
      const renderer = engineRef.current?.renderer;
      if (!pressed || !onPick || !renderer || event.target !== canvas) return;
      const p = local(event);
      const still = Math.abs(p.x - pressed.x) + Math.abs(p.y - pressed.y) < 5;
      pressed = null;
      const node = still ? renderer.nodeAt(p.x, p.y) : -1;
      if (node >= 0) onPick(node);
    };
    const move = (event: PointerEvent) => {
      const renderer = engineRef.current?.renderer;
      if (!renderer) return;
      const p = local(event);
      if (drag) {
        renderer.panBy(p.x - drag.x, p.y - drag.y);
        drag = p;
        return;
      }
      const node = renderer.nodeAt(p.x, p.y);
      renderer.setHover(node);
      if (node !== hovered) {
        hovered = node;
        setHover(node >= 0 ? { node, ...p } : null);
      }
    };
    const leave = () => {
      drag = null;
      hovered = -1;
      engineRef.current?.renderer.setHover(-1);
      setHover(null);
    };
    const fit = () => engineRef.current?.renderer.fit();
    canvas.addEventListener("wheel", wheel, { passive: false });
    canvas.addEventListener("pointerdown", down);
    window.addEventListener("pointerup", up);
    canvas.addEventListener("pointermove", move);
    canvas.addEventListener("pointerleave", leave);
    canvas.addEventListener("dblclick", fit);
    return () => {
      canvas.removeEventListener("wheel", wheel);
      canvas.removeEventListener("pointerdown", down);
      window.removeEventListener("pointerup", up);
      canvas.removeEventListener("pointermove", move);
      canvas.removeEventListener("pointerleave", leave);
      canvas.removeEventListener("dblclick", fit);
    };
  }, [canvasRef, engineRef, setHover, onPick]);
}
