//! The viewer window's input: egui-winit gets every event first; what egui
//! does not want drives the orbit camera (left drag orbits, right/middle
//! drag or shift+left drag pans, the wheel zooms). Dropped .glb/.gltf files
//! become load requests.

use super::orbit_camera::OrbitCamera;
use super::state::ViewerState;
use crate::world::Authority;
use std::path::Path;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::keyboard::{Key, NamedKey};
use winit::window::Window;

/// Pixels of a trackpad scroll that count as one wheel line.
const PIXELS_PER_LINE: f32 = 40.0;

/// What a camera drag does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drag {
    Orbit,
    Pan,
}

/// Mouse and keyboard state of the window, and egui's view of the input.
pub struct WindowInput {
    /// egui's input state (events collected until the next frame).
    pub egui: egui_winit::State,
    cursor: Option<(f64, f64)>,
    shift: bool,
    drag: Option<(Drag, MouseButton)>,
}

/// Whether `path` looks like a glTF file the viewer can load.
pub fn is_model_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("gltf"))
}

impl WindowInput {
    /// Input for `window`, with a fresh egui context; egui textures are at
    /// most `max_texture_side` pixels wide.
    pub fn new(window: &Window, max_texture_side: usize) -> Self {
        let egui = egui_winit::State::new(
            egui::Context::default(),
            egui::ViewportId::ROOT,
            window,
            Some(window.scale_factor() as f32),
            None,
            Some(max_texture_side),
        );
        WindowInput { egui, cursor: None, shift: false, drag: None }
    }

    /// The egui context.
    pub fn egui_ctx(&self) -> &egui::Context {
        self.egui.egui_ctx()
    }

    /// Handles one window event: egui first, then the camera (unless egui
    /// wants the pointer) and dropped files (into `state.load_request`).
    /// Returns a message worth printing (a rejected drop), if any.
    pub fn on_event(
        &mut self,
        window: &Window,
        event: &WindowEvent,
        camera: Option<&mut OrbitCamera>,
        state: &mut ViewerState,
    ) -> Option<String> {
        let response = self.egui.on_window_event(window, event);
        let height = window.inner_size().height as f32;
        match event {
            WindowEvent::ModifiersChanged(m) => {
                self.shift = m.state().shift_key();
                state.keys.run = self.shift;
            }
            WindowEvent::KeyboardInput { event, .. } if !self.egui.egui_ctx().egui_wants_keyboard_input() => {
                let down = event.state == ElementState::Pressed;
                match event.logical_key.as_ref() {
                    Key::Named(NamedKey::ArrowUp) => state.keys.forward = down,
                    Key::Named(NamedKey::ArrowDown) => state.keys.back = down,
                    Key::Named(NamedKey::ArrowLeft) => state.keys.left = down,
                    Key::Named(NamedKey::ArrowRight) => state.keys.right = down,
                    Key::Named(NamedKey::Space) if down && !event.repeat => state.jump = true,
                    Key::Character(c) => match c.to_ascii_lowercase().as_str() {
                        "w" => state.keys.forward = down,
                        "s" => state.keys.back = down,
                        "a" => state.keys.left = down,
                        "d" => state.keys.right = down,
                        "t" if down && !event.repeat => {
                            state.authority = match state.authority {
                                Authority::Animation => Authority::Movement,
                                Authority::Movement => Authority::Animation,
                            }
                        }
                        _ => {}
                    },
                    _ => {}
                }
            }
            WindowEvent::MouseInput { state: button_state, button, .. } => match button_state {
                ElementState::Pressed if !response.consumed && self.drag.is_none() => {
                    let kind = match button {
                        MouseButton::Left if self.shift => Some(Drag::Pan),
                        MouseButton::Left => Some(Drag::Orbit),
                        MouseButton::Right | MouseButton::Middle => Some(Drag::Pan),
                        _ => None,
                    };
                    self.drag = kind.map(|k| (k, *button));
                }
                ElementState::Released if self.drag.is_some_and(|(_, b)| b == *button) => self.drag = None,
                _ => {}
            },
            WindowEvent::CursorMoved { position, .. } => {
                let now = (position.x, position.y);
                if let (Some(before), Some((kind, _)), Some(camera)) = (self.cursor, self.drag, camera) {
                    let (dx, dy) = ((now.0 - before.0) as f32, (now.1 - before.1) as f32);
                    match kind {
                        Drag::Orbit => camera.orbit(dx, dy),
                        Drag::Pan => camera.pan(dx, dy, height),
                    }
                }
                self.cursor = Some(now);
            }
            WindowEvent::CursorLeft { .. } => self.cursor = None,
            WindowEvent::MouseWheel { delta, .. } if !response.consumed => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => *y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / PIXELS_PER_LINE,
                };
                if let Some(camera) = camera {
                    camera.zoom(lines);
                }
            }
            WindowEvent::Focused(false) => {
                self.drag = None;
                state.keys = Default::default();
            }
            WindowEvent::DroppedFile(path) => {
                if is_model_file(path) {
                    state.load_request = Some(path.clone());
                } else {
                    return Some(format!("{}: not a .glb or .gltf file; ignored", path.display()));
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_files() {
        assert!(is_model_file(Path::new("a/b/Fox.glb")));
        assert!(is_model_file(Path::new("x.GLTF")));
        assert!(!is_model_file(Path::new("x.png")));
        assert!(!is_model_file(Path::new("glb")));
    }
}
