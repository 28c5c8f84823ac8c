//! The on-screen controls (egui): one compact window at the right edge, in
//! the spirit of the three.js skinning-blending example's panel, with
//! collapsible sections for playback, the controller (parameters, state,
//! transition, state graph), clips, weights, display, morphs, timing and
//! events. It only reads the character and writes `ViewerState`; the
//! mapping onto the character and the viewer loop act on it.

use super::animation::ViewerAnimation;
use super::detail_limits;
use super::state::{AnimationMode, DebugView, EventLog, FrameTimings, ViewerState};
use crate::anim::{NO_PARENT, SkinningMethod};
use crate::asset::Model;
use crate::character::{Character, ParameterId, ParameterKind, ParameterValue};
use crate::render::{DqsSplit, DrawDetail, PassSetup, SkinningPlacement};
use crate::world::Authority;
use egui::{
    Align2, CollapsingHeader, Color32, Context, ProgressBar, RichText, ScrollArea, Slider, Stroke, Ui,
};

/// One skeleton joint as the UI lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct JointInfo {
    /// Node name (or "node N" when unnamed).
    pub name: String,
    /// Parent skeleton joint.
    pub parent: Option<usize>,
    /// Depth in the hierarchy (indentation in the joint list).
    pub depth: usize,
    /// Whether some skin uses the joint.
    pub skin_joint: bool,
}

/// What the UI shows about a model; built once per model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// File name of the model.
    pub name: String,
    /// Clip names (the index when unnamed) and durations in seconds.
    pub clips: Vec<(String, f32)>,
    /// Every skeleton joint (glTF node), in skeleton order.
    pub joints: Vec<JointInfo>,
    /// Morph target names, flat, as `Pose::morph_weights` (one run per mesh instance).
    pub morph_names: Vec<String>,
    /// Whether the device draws wireframes (fillModeNonSolid).
    pub wireframe_supported: bool,
}

impl ModelInfo {
    /// Collects names, clips, joints and morph targets of `model`.
    pub fn new(model: &Model, wireframe_supported: bool) -> Self {
        let name = std::path::Path::new(&model.file)
            .file_name()
            .map_or_else(|| model.file.clone(), |n| n.to_string_lossy().into_owned());
        let clips = model
            .clips
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone().unwrap_or_else(|| format!("clip {i}")), c.duration))
            .collect();
        let mut skin_joint = vec![false; model.skeleton.len()];
        for skin in &model.skins {
            for &j in &skin.joints {
                if let Some(s) = skin_joint.get_mut(j as usize) {
                    *s = true;
                }
            }
        }
        let mut joints: Vec<JointInfo> = Vec::with_capacity(model.skeleton.len());
        for (j, (n, &p)) in model.skeleton.names().iter().zip(model.skeleton.parents()).enumerate() {
            let parent = (p != NO_PARENT).then_some(p as usize);
            joints.push(JointInfo {
                name: if n.is_empty() { format!("node {j}") } else { n.clone() },
                parent,
                // Parents come first, so their depth is known.
                depth: parent.map_or(0, |p| joints[p].depth + 1),
                skin_joint: skin_joint[j],
            });
        }
        let mut morph_names: Vec<String> =
            (0..model.rest_morph_weights.len()).map(|i| format!("weight {i}")).collect();
        let with_morphs = model.instances.iter().filter(|i| i.morph_count > 0).count();
        for instance in &model.instances {
            let mesh = &model.meshes[instance.mesh];
            for t in 0..instance.morph_count as usize {
                let Some(slot) = morph_names.get_mut(instance.morph_offset as usize + t) else { continue };
                let target = mesh.target_names.get(t).cloned().unwrap_or_else(|| format!("target {t}"));
                // Prefix with the mesh only when several instances have targets.
                *slot = if with_morphs > 1 {
                    let mesh_name = if mesh.name.is_empty() {
                        format!("mesh {}", instance.mesh)
                    } else {
                        mesh.name.clone()
                    };
                    format!("{mesh_name}: {target}")
                } else {
                    target
                };
            }
        }
        ModelInfo { name, clips, joints, morph_names, wireframe_supported }
    }

    fn clip_name(&self, clip: Option<usize>) -> &str {
        clip.and_then(|c| self.clips.get(c)).map_or("none", |c| c.0.as_str())
    }

    fn joint_name(&self, joint: Option<usize>) -> &str {
        joint.and_then(|j| self.joints.get(j)).map_or("none", |j| j.name.as_str())
    }
}

/// Draws the controls for one frame, editing `state`.
pub fn draw(
    ctx: &Context,
    state: &mut ViewerState,
    info: &ModelInfo,
    anim: &ViewerAnimation,
    timings: &FrameTimings,
    log: &EventLog,
) {
    egui::Window::new(RichText::new(&info.name).strong())
        .id(egui::Id::new("vkskin controls"))
        .anchor(Align2::RIGHT_TOP, [-8.0, 8.0])
        .default_width(260.0)
        .resizable(false)
        .collapsible(true)
        .show(ctx, |ui| {
            // Use the window's height before scrolling: without these limits
            // egui gives the area a short default and hides Timing/Events.
            let room = (ctx.content_rect().height() - 64.0).max(120.0);
            ScrollArea::vertical()
                .auto_shrink([false, true])
                .max_height(room)
                .min_scrolled_height(room)
                .show(ui, |ui| {
                    ui.spacing_mut().slider_width = 150.0;
                    section(ui, "Playback", true, |ui| playback(ui, state, anim));
                    if anim.has_controller() {
                        let crowd = timings.crowd_posed.is_some();
                        section(ui, "Controller", true, |ui| controller(ui, state, anim, crowd));
                    }
                    if state.mode == AnimationMode::Clips || !anim.has_controller() {
                        section(ui, "Clips", true, |ui| clips(ui, state, info));
                    }
                    section(ui, "Weights", true, |ui| weights(ui, info, anim.character()));
                    if !anim.character().controller().layers().is_empty() {
                        section(ui, "Layers", true, |ui| layers(ui, anim.character()));
                    }
                    section(ui, "Sampled clips", false, |ui| sampled_clips(ui, info, anim.character()));
                    section(ui, "Display", true, |ui| display(ui, state, info));
                    if !info.morph_names.is_empty() {
                        section(ui, "Morphs", false, |ui| morphs(ui, state, info, anim.character()));
                    }
                    section(ui, "Timing", true, |ui| timing(ui, state, timings));
                    section(ui, "Events", false, |ui| events(ui, log));
                });
        });
}

fn section(ui: &mut Ui, title: &str, open: bool, body: impl FnOnce(&mut Ui)) {
    CollapsingHeader::new(RichText::new(title).strong()).default_open(open).show(ui, body);
}

fn playback(ui: &mut Ui, state: &mut ViewerState, anim: &ViewerAnimation) {
    ui.horizontal(|ui| {
        if ui.small_button("⏮").on_hover_text("Step back 1/30 s").clicked() {
            state.step_frames -= 1;
        }
        let label = if state.playing { "⏸ Pause" } else { "⏵ Play" };
        if ui.button(label).clicked() {
            state.playing = !state.playing;
        }
        if ui.small_button("⏭").on_hover_text("Step forward 1/30 s").clicked() {
            state.step_frames += 1;
        }
        if state.mode == AnimationMode::Clips || !anim.has_controller() {
            ui.checkbox(&mut state.looping, "Loop");
        }
    });
    ui.horizontal(|ui| {
        ui.add(Slider::new(&mut state.speed, -2.0..=2.0).text("rate").fixed_decimals(2))
            .on_hover_text("Playback rate of everything (negative plays backwards)");
        if ui.small_button("1×").on_hover_text("Reset the rate").clicked() {
            state.speed = 1.0;
        }
    });
    // The playhead: the heaviest clip of the current state.
    let (time, duration) = anim.character().playhead().map_or((0.0, 0.0), |(_, t, d)| (t as f32, d));
    // Shows the clip's time; dragging asks the character to jump.
    let mut t = state.scrub_to.unwrap_or(time);
    let response = ui.add_enabled(
        duration > 0.0,
        Slider::new(&mut t, 0.0..=duration.max(1e-3)).show_value(false).trailing_fill(true),
    );
    if response.changed() {
        state.scrub_to = Some(t);
    }
    ui.monospace(format!("{time:6.3} / {duration:.3} s"));
}

/// The controller's section: the mode, the parameters (and, with a
/// `crowd`, whether it follows them), the state and the state graph.
fn controller(ui: &mut Ui, state: &mut ViewerState, anim: &ViewerAnimation, crowd: bool) {
    if anim.in_level() {
        ui.horizontal(|ui| {
            ui.label("moved by");
            ui.radio_value(&mut state.authority, Authority::Movement, "keys");
            ui.radio_value(&mut state.authority, Authority::Animation, "root motion");
        });
        ui.weak("W/A/S/D or arrows move (Shift runs), Space jumps, T switches");
        reach(ui, state, anim);
    } else {
        ui.horizontal(|ui| {
            ui.radio_value(&mut state.mode, AnimationMode::Controller, "state machine");
            ui.radio_value(&mut state.mode, AnimationMode::Clips, "clips");
        });
    }
    if let Some(source) = anim.controller_source() {
        ui.weak(source);
    }
    if state.mode != AnimationMode::Controller {
        return;
    }
    let character = anim.character();
    parameters(ui, state, character);
    if crowd {
        ui.checkbox(&mut state.crowd_follows, "crowd follows").on_hover_text(
            "The crowd behind takes these parameter changes too, each character from its own phase",
        );
    }
    let states = character.controller().states();
    let name = |s: usize| states.get(s).map_or("?", |s| s.name.as_str());
    match (character.state(), character.transition()) {
        (Some(s), Some((to, progress))) => {
            ui.label(format!("state: {} -> {}", name(s), name(to)));
            ui.add(ProgressBar::new(progress).text(format!("transition {:.0} %", progress * 100.0)));
        }
        (Some(s), None) => {
            ui.label(format!("state: {}", name(s)));
        }
        (None, _) => {
            ui.weak("no states: rest pose");
        }
    }
    state_graph(ui, character);
}

/// Arm IK in a level: a point the nearer hand reaches for (in the
/// character's frame, drawn as a gizmo), or the level's rails; each hand's
/// weight and error.
fn reach(ui: &mut Ui, state: &mut ViewerState, anim: &ViewerAnimation) {
    let Some((_, hands)) = anim.reach() else { return };
    let mut on = state.reach.is_some();
    if ui
        .checkbox(&mut on, "Hand reaches a point")
        .on_hover_text("Else the hands take the rails within reach")
        .changed()
    {
        state.reach = on.then_some(REACH_START);
    }
    if let Some(point) = state.reach.as_mut() {
        ui.add(Slider::new(&mut point[0], -0.8..=0.8).text("right (m)").fixed_decimals(2));
        ui.add(Slider::new(&mut point[1], 0.0..=2.0).text("up (m)").fixed_decimals(2));
        ui.add(Slider::new(&mut point[2], -0.6..=1.0).text("ahead (m)").fixed_decimals(2));
    }
    for hand in hands {
        let text = format!("{} reach {:.2}, {:.1} cm off", hand.joint, hand.weight, hand.error_cm);
        ui.add(ProgressBar::new(hand.weight).text(text));
    }
}

/// Where a newly set reach point starts: ahead and to the right, at chest height.
const REACH_START: [f32; 3] = [0.25, 1.2, 0.4];

/// Draws the reach point (a ring and cross, labelled) and each reaching
/// hand's target (a dot) over the scene, projected with `view_proj`, the
/// last frame's camera (world to Vulkan clip space).
pub fn reach_gizmo(ctx: &Context, anim: &ViewerAnimation, view_proj: &nalgebra::Matrix4<f32>) {
    let Some((point, hands)) = anim.reach() else { return };
    let screen = ctx.content_rect();
    let project = |p: nalgebra::Vector3<f32>| -> Option<egui::Pos2> {
        let c = view_proj * nalgebra::Vector4::new(p.x, p.y, p.z, 1.0);
        (c.w > 1e-6).then(|| {
            // Vulkan clip space: y points down, as the screen's does.
            let (x, y) = (c.x / c.w, c.y / c.w);
            egui::pos2(
                screen.left() + (x + 1.0) * 0.5 * screen.width(),
                screen.top() + (y + 1.0) * 0.5 * screen.height(),
            )
        })
    };
    let painter =
        ctx.layer_painter(egui::LayerId::new(egui::Order::Background, egui::Id::new("reach gizmo")));
    let colour = Color32::from_rgb(255, 120, 40);
    if let Some(at) = point.and_then(project) {
        painter.circle_stroke(at, 9.0, Stroke::new(2.0, colour));
        painter
            .line_segment([at - egui::vec2(14.0, 0.0), at + egui::vec2(14.0, 0.0)], Stroke::new(1.5, colour));
        painter
            .line_segment([at - egui::vec2(0.0, 14.0), at + egui::vec2(0.0, 14.0)], Stroke::new(1.5, colour));
        painter.text(
            at + egui::vec2(12.0, -12.0),
            Align2::LEFT_BOTTOM,
            "reach",
            egui::FontId::proportional(12.0),
            colour,
        );
    }
    for hand in hands.iter().filter(|h| h.weight > 0.0) {
        if let Some(at) = project(hand.target) {
            painter.circle_filled(at, 3.0 + 3.0 * hand.weight, colour.gamma_multiply(0.8));
        }
    }
}

/// A slider, checkbox or button per parameter; changes go to `state.parameter_changes`.
fn parameters(ui: &mut Ui, state: &mut ViewerState, character: &Character) {
    let values = character.parameters().values();
    for (i, p) in character.controller().parameters().iter().enumerate() {
        let id = ParameterId(i as u32);
        let value = values.get(i).copied().unwrap_or(0.0);
        match p.kind {
            ParameterKind::Float => {
                let (lo, hi) = p.range.unwrap_or((value.min(0.0), value.max(1.0) * 2.0));
                let mut v = value;
                if ui.add(Slider::new(&mut v, lo..=hi).text(&p.name).fixed_decimals(2)).changed() {
                    state.parameter_changes.push((id, ParameterValue::Float(v)));
                }
            }
            ParameterKind::Bool => {
                let mut on = value != 0.0;
                if ui.checkbox(&mut on, &p.name).changed() {
                    state.parameter_changes.push((id, ParameterValue::Bool(on)));
                }
            }
            ParameterKind::Trigger => {
                if ui.button(&p.name).on_hover_text("Fire this trigger").clicked() {
                    state.parameter_changes.push((id, ParameterValue::Trigger));
                }
            }
        }
    }
}

/// The states on a circle, transitions as arrows (any-state ones from a
/// small "any" node in the middle); the current state filled, the
/// crossfade's target outlined, each state's weight as its fill's strength.
fn state_graph(ui: &mut Ui, character: &Character) {
    let controller = character.controller();
    let states = controller.states();
    if states.is_empty() {
        return;
    }
    let size = egui::vec2(ui.available_width().min(250.0), 150.0);
    let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    let center = rect.center();
    let radius = egui::vec2(rect.width() * 0.5 - 40.0, rect.height() * 0.5 - 16.0);
    let n = states.len();
    let position = |s: usize| {
        let angle = std::f32::consts::TAU * s as f32 / n as f32 - std::f32::consts::FRAC_PI_2;
        if n == 1 { center } else { center + egui::vec2(angle.cos() * radius.x, angle.sin() * radius.y) }
    };
    let edge = Stroke::new(1.0, visuals.weak_text_color());
    let running = Stroke::new(2.0, Color32::from_rgb(230, 160, 40));
    // Opposite transitions between two states are drawn side by side.
    let arrow = |from: egui::Pos2, to: egui::Pos2, stroke: Stroke| {
        let d = to - from;
        let len = d.length();
        if len < 1.0 {
            return;
        }
        let side = egui::vec2(-d.y, d.x) / len * 3.0;
        // Stop short of the boxes.
        let (a, b) = (from + d * (18.0 / len).min(0.45) + side, to - d * (18.0 / len).min(0.45) + side);
        painter.arrow(a, b - a, stroke);
    };
    let fade = character.transition().map(|(to, _)| to);
    let source = character.state();
    for t in controller.transitions() {
        let to = position(t.to as usize);
        let from = t.from.map_or(center, |f| position(f as usize));
        // The running crossfade's edge (or the any-state one into its target).
        let active =
            fade == Some(t.to as usize) && (t.from.is_none() || t.from.map(|f| f as usize) == source);
        arrow(from, to, if active { running } else { edge });
    }
    if controller.transitions().iter().any(|t| t.from.is_none()) && n > 1 {
        painter.circle_filled(center, 3.0, visuals.weak_text_color());
    }
    let target = fade;
    let accent = visuals.selection.bg_fill;
    for (s, state) in states.iter().enumerate() {
        let p = position(s);
        let galley = painter.layout_no_wrap(
            state.name.clone(),
            egui::FontId::proportional(12.0),
            visuals.text_color(),
        );
        let box_rect = egui::Rect::from_center_size(p, galley.size() + egui::vec2(10.0, 6.0));
        let weight = character.state_weights().get(s).copied().unwrap_or(0.0);
        let fill = accent.gamma_multiply(weight.clamp(0.0, 1.0));
        painter.rect_filled(box_rect, 4.0, visuals.extreme_bg_color);
        painter.rect_filled(box_rect, 4.0, fill);
        let stroke = if Some(s) == character.state() {
            Stroke::new(2.0, visuals.strong_text_color())
        } else if Some(s) == target {
            Stroke::new(2.0, Color32::from_rgb(230, 160, 40))
        } else {
            Stroke::new(1.0, visuals.weak_text_color())
        };
        painter.rect_stroke(box_rect, 4.0, stroke, egui::StrokeKind::Outside);
        painter.galley(box_rect.min + egui::vec2(5.0, 3.0), galley, visuals.text_color());
    }
}

/// Each clip's weight in the pose, as a bar.
fn weights(ui: &mut Ui, info: &ModelInfo, character: &Character) {
    let mut any = false;
    for (c, &w) in character.clip_weights().iter().enumerate() {
        if w <= 1e-4 {
            continue;
        }
        any = true;
        let name = info.clips.get(c).map_or("?", |c| c.0.as_str());
        ui.add(ProgressBar::new(w).text(format!("{name}  {w:.2}")));
    }
    if !any {
        ui.weak("No clip plays: rest pose.");
    }
}

/// Each controller layer: its mode and weight at the last evaluation.
fn layers(ui: &mut Ui, character: &Character) {
    for layer in character.evaluated_layers().skip(1) {
        let name = layer.name().unwrap_or("?");
        let masked = if layer.mask().is_some() { ", masked" } else { "" };
        let text = format!("{name} ({}{masked})  {:.2}", layer.mode_name(), layer.weight);
        ui.add(ProgressBar::new(layer.weight).text(text));
    }
}

/// The trace's clip list for this frame: every clip sampled for the pose,
/// its layer, its time on the file's timeline and its weight in its layer
/// (what `simulate --json` and `dump --controller` write as `clips`).
fn sampled_clips(ui: &mut Ui, info: &ModelInfo, character: &Character) {
    let layer_names: Vec<&str> = character.evaluated_layers().map(|l| l.name().unwrap_or("base")).collect();
    egui::Grid::new("sampled clips").num_columns(4).spacing([10.0, 2.0]).striped(true).show(ui, |ui| {
        for heading in ["clip", "layer", "time", "weight"] {
            ui.strong(heading);
        }
        ui.end_row();
        for c in character.sampled_clips() {
            ui.label(info.clips.get(c.clip as usize).map_or("?", |c| c.0.as_str()));
            ui.label(layer_names.get(c.layer as usize).copied().unwrap_or("?"));
            ui.label(format!("{:.3} s", c.time));
            ui.label(format!("{:.3}", c.weight));
            ui.end_row();
        }
    });
}

fn clips(ui: &mut Ui, state: &mut ViewerState, info: &ModelInfo) {
    if info.clips.is_empty() {
        ui.weak("This model has no clips: rest pose.");
        return;
    }
    egui::ComboBox::new("clip a", "A").selected_text(info.clip_name(state.clip_a)).show_ui(ui, |ui| {
        ui.selectable_value(&mut state.clip_a, None, "none (rest pose)");
        for (i, (name, d)) in info.clips.iter().enumerate() {
            ui.selectable_value(&mut state.clip_a, Some(i), format!("{name}  ({d:.2} s)"));
        }
    });
    egui::ComboBox::new("clip b", "B").selected_text(info.clip_name(state.clip_b)).show_ui(ui, |ui| {
        ui.selectable_value(&mut state.clip_b, None, "none");
        for (i, (name, d)) in info.clips.iter().enumerate() {
            ui.selectable_value(&mut state.clip_b, Some(i), format!("{name}  ({d:.2} s)"));
        }
    });
    let has_b = state.clip_b.is_some();
    ui.add_enabled(has_b, Slider::new(&mut state.blend, 0.0..=1.0).text("blend A to B").fixed_decimals(2));
    ui.add_enabled(has_b, egui::Checkbox::new(&mut state.sync_phase, "Sync phase"))
        .on_hover_text("Keep both clips at the same fraction of their cycle (walk/run)");
}

fn display(ui: &mut Ui, state: &mut ViewerState, info: &ModelInfo) {
    ui.horizontal(|ui| {
        ui.checkbox(&mut state.show_mesh, "Mesh");
        ui.checkbox(&mut state.show_bones, "Bones");
        ui.add_enabled(info.wireframe_supported, egui::Checkbox::new(&mut state.wireframe, "Wireframe"))
            .on_disabled_hover_text("The device lacks fillModeNonSolid");
    });
    if !info.wireframe_supported {
        state.wireframe = false;
    }
    ui.horizontal(|ui| {
        ui.label("Skinning");
        ui.radio_value(&mut state.frame.placement, SkinningPlacement::Compute, "compute");
        ui.radio_value(&mut state.frame.placement, SkinningPlacement::Vertex, "vertex");
    });
    ui.horizontal(|ui| {
        ui.label("Blend");
        ui.radio_value(&mut state.frame.blend.method, SkinningMethod::Linear, "linear")
            .on_hover_text("Linear blend skinning: matrices averaged");
        ui.radio_value(&mut state.frame.blend.method, SkinningMethod::DualQuaternion, "dual quat")
            .on_hover_text("Dual-quaternion skinning: keeps volume where joints twist");
    });
    if state.frame.blend.method == SkinningMethod::DualQuaternion {
        ui.horizontal(|ui| {
            ui.label("Split");
            ui.radio_value(&mut state.frame.blend.dqs_split, DqsSplit::Shader, "in shader")
                .on_hover_text("The palette holds matrices; the shader splits each influence's");
            ui.radio_value(&mut state.frame.blend.dqs_split, DqsSplit::Cpu, "on CPU")
                .on_hover_text("The CPU splits each joint once per frame and uploads dual quaternions");
        });
    }
    ui.horizontal(|ui| {
        ui.label("Passes");
        ui.radio_value(&mut state.frame.passes, PassSetup::Main, "1");
        ui.radio_value(&mut state.frame.passes, PassSetup::DepthPrepass, "2")
            .on_hover_text("Depth prepass, then the main pass");
        ui.radio_value(&mut state.frame.passes, PassSetup::ShadowCascades, "5 (shadows)")
            .on_hover_text("Four shadow cascades of the key light, then the main pass");
    });
    ui.horizontal(|ui| {
        ui.label("Detail");
        ui.radio_value(&mut state.frame.detail, DrawDetail::Auto, "auto")
            .on_hover_text("Distant characters draw simplified meshes within half a pixel; those out of view only cast shadows");
        ui.radio_value(&mut state.frame.detail, DrawDetail::Full, "full")
            .on_hover_text("Every character draws its full mesh in every pass");
    });
    if state.frame.detail == DrawDetail::Auto {
        detail_limits::controls(ui, &mut state.detail_limits);
    }
    ui.label("Debug view");
    ui.horizontal_wrapped(|ui| {
        ui.radio_value(&mut state.debug_view, DebugView::Shaded, "shaded");
        ui.radio_value(&mut state.debug_view, DebugView::BindPose, "bind pose");
        ui.radio_value(&mut state.debug_view, DebugView::IdentityPalette, "identity palette");
        ui.radio_value(&mut state.debug_view, DebugView::WeightHeatMap, "weights");
    });
    let any_skin = info.joints.iter().any(|j| j.skin_joint);
    egui::ComboBox::new("joint", "Joint")
        .selected_text(info.joint_name(state.selected_joint))
        .height(320.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut state.selected_joint, None, "none");
            for (j, joint) in info.joints.iter().enumerate() {
                // With skins, only their joints: other nodes carry no weights.
                if any_skin && !joint.skin_joint {
                    continue;
                }
                let indent = "  ".repeat(joint.depth.min(16));
                ui.selectable_value(&mut state.selected_joint, Some(j), format!("{indent}{}", joint.name));
            }
        });
    if state.debug_view == DebugView::WeightHeatMap && state.selected_joint.is_none() {
        ui.weak("Pick a joint to see its weights (blue 0 to red 1).");
    }
}

/// The morph weights: as the clips and layers set them this frame (bars
/// that move with the animation), or overridden by hand (sliders).
fn morphs(ui: &mut Ui, state: &mut ViewerState, info: &ModelInfo, character: &Character) {
    ui.checkbox(&mut state.morph_override, "Override clip weights");
    if state.morph_override {
        for (name, w) in info.morph_names.iter().zip(state.morph_weights.iter_mut()) {
            ui.add(Slider::new(w, 0.0..=1.0).text(name).fixed_decimals(2));
        }
        return;
    }
    let live = &character.local_pose().morph_weights;
    for (name, &w) in info.morph_names.iter().zip(live) {
        ui.add(ProgressBar::new(w.clamp(0.0, 1.0)).text(format!("{name}  {w:.2}")));
    }
}

fn timing(ui: &mut Ui, state: &mut ViewerState, t: &FrameTimings) {
    egui::Grid::new("timings").num_columns(2).spacing([12.0, 2.0]).show(ui, |ui| {
        let row = |ui: &mut Ui, label: &str, value: String| {
            ui.label(label);
            ui.monospace(value);
            ui.end_row();
        };
        row(ui, "fps", format!("{:8.1}", t.fps));
        row(ui, "CPU pose", format!("{:8.1} µs", t.cpu_pose_us));
        if let Some(posed) = t.crowd_posed {
            row(ui, "posed", format!("{posed:8}"));
        }
        row(ui, "upload", format!("{:8} B", t.upload_bytes));
        row(ui, "GPU upload", format!("{:8.1} µs", t.gpu_upload_us));
        row(ui, "GPU skin", format!("{:8.1} µs", t.gpu_skin_us));
        row(ui, "GPU draw", format!("{:8.1} µs", t.gpu_draw_us));
        row(ui, "GPU frame", format!("{:8.1} µs", t.gpu_frame_us));
        match t.gpu_frame_triangles {
            // The GPU frame budget found the triangles are not the cost.
            Some(u64::MAX) => row(ui, "budgeted", "no limit".to_string()),
            // What it lets the next frame draw.
            Some(allowed) => row(ui, "budgeted", format!("{allowed:8} triangles")),
            None => {}
        }
        if let Some(cost) = t.gpu_frame_cost {
            // What the steering measured: the part no coarsening removes.
            row(ui, "frame cost", cost.describe());
            // When that part alone is over the budget, what would keep it
            // (as `render`'s warning and `bench`'s verdict say).
            if state.detail_limits.gpu_frame.is_some_and(|budget| cost.fixed_part_over(budget)) {
                row(ui, "over before triangles", "fewer characters or passes".to_string());
            }
        }
        row(ui, "triangles", format!("{:8}", t.triangles));
        if t.shadow_triangles > 0 {
            // Each cascade draws the casters that reach its box.
            row(ui, "in shadows", format!("{:8}", t.shadow_triangles));
        }
        row(ui, "skinned", format!("{:8}", t.skinned_vertices));
        let (levels, culled) = t.detail;
        let levels = levels.map(|n| n.to_string()).join(" · ");
        // Characters in view at each detail level, the full mesh first;
        // of the culled, those drawn by no pass (not even their shadows).
        row(ui, "detail levels", format!("{levels}, {culled} culled"));
        row(ui, "hidden", format!("{:8}", t.hidden));
        if t.pixel_error > crate::render::draw_order::PIXEL_ERROR {
            // A detail limit made every character coarser.
            row(ui, &detail_limits::over_budget_label(t.over_budget), format!("{:8.2} px", t.pixel_error));
        }
    });
    ui.checkbox(&mut state.vsync, "VSync");
}

fn events(ui: &mut Ui, log: &EventLog) {
    if log.is_empty() {
        ui.weak("No events yet.");
        return;
    }
    ScrollArea::vertical().id_salt("event log").max_height(140.0).show(ui, |ui| {
        for e in log.entries().rev() {
            ui.monospace(format!("{:7.2}s {} @{:.2}: {}", e.at, e.clip, e.time, e.name));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::LoggedEvent;
    use crate::render::draw_order::OverBudget;
    use crate::render::gpu_frame_budget::FrameCost;
    use crate::test_model::test_model;
    use std::sync::Arc;
    use std::time::Duration;

    fn run(state: &mut ViewerState, info: &ModelInfo, anim: &ViewerAnimation, log: &EventLog) -> usize {
        let ctx = Context::default();
        // A GPU frame budget that coarsened the levels: its rows show too
        // (with the budget the callers set, a fixed part over it).
        let timings = FrameTimings {
            fps: 60.0,
            cpu_pose_us: 12.5,
            gpu_frame_triangles: Some(1_000_000),
            gpu_frame_cost: Some(FrameCost { fixed_us: 20_000.0, per_triangle_us: 7e-4 }),
            pixel_error: 0.84,
            over_budget: OverBudget { gpu_frame: true, ..OverBudget::default() },
            ..FrameTimings::default()
        };
        let mut shapes = 0;
        // Two passes: egui lays some things out only from the second frame on.
        for _ in 0..2 {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0))),
                ..Default::default()
            };
            let out = ctx.run_ui(input, |ui| draw(ui.ctx(), state, info, anim, &timings, log));
            shapes = out.shapes.len();
            // No renderer here to apply the font atlas upload.
            out.drop_without_applying_deltas();
        }
        // The symbols on buttons and labels exist in egui's default fonts.
        let font = egui::FontId::proportional(14.0);
        assert!(ctx.fonts_mut(|f| f.has_glyphs(&font, "⏮⏭⏸⏵×µ")), "a symbol is missing from the fonts");
        shapes
    }

    #[test]
    fn model_info_names() {
        let model = test_model();
        let info = ModelInfo::new(&model, false);
        assert_eq!(info.name, "test.gltf");
        assert_eq!(info.clips, vec![("Walk".to_string(), 1.0), ("Run".to_string(), 0.5)]);
        assert_eq!(info.morph_names, vec!["smile", "blink"]);
        assert_eq!(info.joints[2].name, "spine");
        assert_eq!((info.joints[2].parent, info.joints[2].depth), (Some(1), 2));
        assert!(info.joints[1].skin_joint && !info.joints[0].skin_joint);
    }

    #[test]
    fn draws_headless_without_panicking() {
        let model = test_model();
        let info = ModelInfo::new(&model, false);
        let mut log = EventLog::default();
        log.push(LoggedEvent { at: 1.0, clip: "Walk".into(), time: 0.25, name: "left".into() });
        let mut state = ViewerState {
            clip_a: Some(0),
            clip_b: Some(1),
            wireframe: true,
            morph_weights: vec![0.2, 0.4],
            selected_joint: Some(2),
            ..ViewerState::default()
        };
        state.detail_limits.gpu_frame = Some(Duration::from_micros(16_667));
        let anim = ViewerAnimation::new(Arc::new(model.clone()), None, &mut state).unwrap();
        let shapes = run(&mut state, &info, &anim, &log);
        assert!(shapes > 0, "no shapes");
        // The budgets shown are kept as they were, not rounded by their controls.
        assert_eq!(state.detail_limits.gpu_frame, Some(Duration::from_micros(16_667)));
        // Unsupported wireframe is switched off; nothing else changed by itself.
        assert!(!state.wireframe);
        assert_eq!(state.clip_a, Some(0));
        assert!(state.scrub_to.is_none());
        // A model without clips draws too.
        let bare = crate::test_model::model_with_clips(Vec::new());
        let info = ModelInfo::new(&bare, true);
        let mut state = ViewerState::default();
        let anim = ViewerAnimation::new(Arc::new(bare), None, &mut state).unwrap();
        assert!(run(&mut state, &info, &anim, &EventLog::default()) > 0);
    }

    /// The built-in character driven by the controller `text`.
    fn built_in(text: &str, state: &mut ViewerState) -> (Arc<Model>, ViewerAnimation) {
        let model = Arc::new(crate::asset::load_default_character().unwrap());
        let controller = crate::character::Controller::from_text(text, &model).unwrap();
        let anim = ViewerAnimation::new(model.clone(), Some((controller, "test".into())), state).unwrap();
        (model, anim)
    }

    #[test]
    fn draws_the_controller_and_its_state_graph() {
        let mut state = ViewerState::default();
        let (model, mut anim) = built_in(crate::character::controller::DEFAULT_CONTROLLER, &mut state);
        let mut log = EventLog::default();
        state.parameter_changes.push((crate::character::ParameterId(0), ParameterValue::Float(3.0)));
        for _ in 0..5 {
            anim.update(1.0 / 30.0, &mut state, &mut log, 0.0).unwrap();
        }
        assert!(anim.character().transition().is_some(), "a crossfade runs: its progress bar shows");
        let info = ModelInfo::new(&model, true);
        assert!(run(&mut state, &info, &anim, &log) > 0);
        // Drawing changes no parameter by itself.
        assert!(state.parameter_changes.is_empty());
    }

    #[test]
    fn draws_layers_and_the_sampled_clips() {
        let text = r#"(
            parameters: [Float(name: "lean", default: 0.5, min: 0.0, max: 1.0)],
            states: [(name: "Walk", motion: Clip(clip: "Walk"))],
            layers: [(name: "lean", motion: Clip(clip: "Run"), blending: Additive, weight: "lean",
                      mask: [(joint: "Spine")])],
        )"#;
        let mut state = ViewerState::default();
        let (model, mut anim) = built_in(text, &mut state);
        let mut log = EventLog::default();
        anim.update(1.0 / 30.0, &mut state, &mut log, 0.0).unwrap();
        let character = anim.character();
        assert_eq!(character.sampled_clips().map(|c| c.layer).collect::<Vec<_>>(), [0, 1]);
        let info = ModelInfo::new(&model, true);
        let with_layers = run(&mut state, &info, &anim, &log);
        // The same frame without the layer panel and clip list draws less.
        let mut bare_state = ViewerState::default();
        let bare = r#"(states: [(name: "Walk", motion: Clip(clip: "Walk"))])"#;
        let (_, mut bare_anim) = built_in(bare, &mut bare_state);
        bare_anim.update(1.0 / 30.0, &mut bare_state, &mut log, 0.0).unwrap();
        assert!(with_layers > run(&mut bare_state, &info, &bare_anim, &log));
    }

    #[test]
    fn in_a_level_the_hand_reaches_the_set_point_and_the_gizmo_draws_it() {
        let mut state = ViewerState::default();
        let (_, mut anim) = built_in(crate::character::controller::DEFAULT_CONTROLLER, &mut state);
        anim.enter_level(&crate::world::Level::named("demo").unwrap(), &mut state).unwrap();
        state.reach = Some(REACH_START);
        let mut log = EventLog::default();
        for _ in 0..40 {
            anim.update(1.0 / 30.0, &mut state, &mut log, 0.0).unwrap();
        }
        let (point, hands) = anim.reach().expect("the built-in character reaches");
        let point = point.expect("the set point");
        let reaching = hands.iter().find(|h| h.weight > 0.99).expect("a hand fully blended in");
        assert!((reaching.target - point).norm() < 1e-4, "it reaches for the set point");
        assert!(reaching.error_cm < 1.0, "{} cm off", reaching.error_cm);
        // The gizmo: a camera looking at the point from 3 m in front.
        let eye = point + anim.transform().fixed_view::<3, 3>(0, 0) * nalgebra::Vector3::new(0.0, 0.0, 3.0);
        let camera = crate::render::camera::Camera {
            eye: eye.into(),
            target: point.into(),
            ..crate::render::camera::Camera::frame_box([-1.0; 3], [1.0; 3], 1.6, 0.8)
        };
        let ctx = Context::default();
        let shapes = |with: bool| {
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1280.0, 800.0))),
                ..Default::default()
            };
            let out = ctx.run_ui(input, |ui| {
                if with {
                    reach_gizmo(ui.ctx(), &anim, &camera.view_proj());
                }
            });
            let n = out.shapes.len();
            out.drop_without_applying_deltas();
            n
        };
        assert!(shapes(true) > shapes(false), "the gizmo draws");
    }
}
