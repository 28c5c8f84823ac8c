//! Foresight through the renderer's one frame path on a real Vulkan device,
//! validation and synchronization validation on: a crowd told before each
//! frame which characters no pass will draw (`Renderer::foresee`) skips
//! posing them, yet a camera turning through the crowd sees the very same
//! pictures, bit for bit, as a crowd posed whole: characters coming into
//! view are posed before the frame that first draws them, shadows
//! included; posed on the GPU, the pose pass leaves them out too. And a
//! crowd seen small is posed at the rates its size allows
//! (`Renderer::pose_foreseen`). Skips without a device, unless
//! VKSKIN_NO_SKIP is set.

use crate::common::{assert_no_messages, context};
use ash::vk;
use nalgebra::{Point3, Vector3};
use std::sync::Arc;
use vkskin::anim::{FramePoses, Sight};
use vkskin::asset::{Model, load_default_character};
use vkskin::character::controller::DEFAULT_CONTROLLER;
use vkskin::character::{Character, Controller, Crowd, EvaluationRate};
use vkskin::gpu::GpuContext;
use vkskin::render::camera::{Camera, DEFAULT_FOV_Y};
use vkskin::render::renderer::{RenderSettings, Renderer};
use vkskin::render::{DrawDetail, PassSetup};
use vkskin::world::level::Level;
use vkskin::world::scenery::scenery_model;

const W: u32 = 320;
const H: u32 = 240;
const SIDE: usize = 7;
const FRAMES: u32 = 14;

fn crowd(model: &Arc<Model>) -> Crowd {
    let controller = Arc::new(Controller::from_text(DEFAULT_CONTROLLER, model).expect("controller"));
    Crowd::new(model.rig.clone(), controller, SIDE * SIDE, 1.5, 30.0, 1).expect("crowd")
}

fn renderer(ctx: &GpuContext, model: &Arc<Model>, scenery: Option<&Arc<Model>>) -> Renderer {
    let mut settings = RenderSettings::new(vk::Extent2D { width: W, height: H });
    settings.msaa = false;
    settings.characters = (SIDE * SIDE) as u32;
    settings.frame.passes = PassSetup::ShadowCascades;
    settings.frame.detail = DrawDetail::Auto;
    let mut renderer = Renderer::new(ctx, model.clone(), settings).expect("renderer");
    if let Some(scenery) = scenery {
        renderer.add_scenery(ctx, scenery.clone()).expect("scenery");
    }
    renderer
}

/// Frame `i`'s camera: standing between the crowd's middle characters at
/// eye height, turned a little further each frame (about 20 degrees).
fn turning(i: u32) -> Camera {
    let eye = Point3::new(0.75, 1.6, 0.75);
    let angle = i as f32 * 0.35;
    let look = Vector3::new(angle.cos(), -0.15, angle.sin());
    Camera {
        eye,
        target: eye + look * 5.0,
        up: Vector3::y(),
        fov_y: DEFAULT_FOV_Y,
        aspect: W as f32 / H as f32,
        near: 0.05,
        far: 60.0,
        lens_shift: 0.0,
    }
}

/// Every frame's pixels of the crowd (posed on the GPU with `gpu`) seen by
/// the turning camera; with `foreseen`, the crowd is told before each
/// frame which characters no pass will draw (and sizes are ignored: every
/// drawn one at full rate). Also returns, per frame, the characters
/// foreseen unseen, those seen again after being unseen, and those the GPU
/// posed.
fn turn(ctx: &GpuContext, model: &Arc<Model>, ground: &Arc<Model>, foreseen: bool, gpu: bool) -> Turned {
    let mut renderer = renderer(ctx, model, Some(ground));
    let mut crowd = crowd(model);
    crowd.set_pose_on_gpu(gpu).expect("GPU pose");
    let mut gpu_posed = Vec::new();
    let mut pictures = vec![Vec::new(); FRAMES as usize];
    let mut keep = |i: u64, rgba: &[u8]| {
        pictures[i as usize] = rgba.to_vec();
        Ok(())
    };
    let (mut unseen, mut seen_again) = (Vec::new(), Vec::new());
    let mut was_unseen = vec![false; SIDE * SIDE];
    for i in 0..FRAMES {
        let camera = turning(i);
        if foreseen {
            let sight: Vec<Sight> = renderer
                .foresee(&crowd, &camera, H)
                .iter()
                .map(|s| match s {
                    Sight::Drawn { .. } => Sight::Drawn { pixels: f32::INFINITY },
                    Sight::Unseen => Sight::Unseen,
                })
                .collect();
            let now: Vec<bool> = sight.iter().map(|s| *s == Sight::Unseen).collect();
            unseen.push(now.iter().filter(|u| **u).count());
            seen_again.push(was_unseen.iter().zip(&now).filter(|(was, is)| **was && !**is).count());
            was_unseen = now;
            crowd.foresee(&sight);
        }
        crowd.frame(i).expect("frame");
        let report = renderer.render_frame(ctx, &crowd, &camera, true, &mut keep).expect("render");
        gpu_posed.push(report.skin.posed_characters as usize);
    }
    renderer.finish(ctx, &mut keep).expect("finish");
    renderer.destroy(ctx);
    Turned { pictures, unseen, seen_again, gpu_posed }
}

struct Turned {
    pictures: Vec<Vec<u8>>,
    unseen: Vec<usize>,
    seen_again: Vec<usize>,
    gpu_posed: Vec<usize>,
}

/// Asserts two runs drew the same pictures, bit for bit.
fn same_pictures(whole: &Turned, foreseen: &Turned, what: &str) {
    for (i, (a, b)) in whole.pictures.iter().zip(&foreseen.pictures).enumerate() {
        assert!(!a.is_empty() && a.len() == b.len(), "{what}: frame {i} missing");
        let differing = a.chunks_exact(4).zip(b.chunks_exact(4)).filter(|(p, q)| p != q).count();
        assert_eq!(differing, 0, "{what}, frame {i}: {differing} pixels differ from the crowd posed whole");
    }
}

#[test]
fn a_turning_camera_sees_the_same_pictures_with_unseen_characters_left_unposed() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let ground = Arc::new(scenery_model(&Level::demo()).expect("demo level"));
    let whole = turn(&ctx, &model, &ground, false, false);
    let foreseen = turn(&ctx, &model, &ground, true, false);
    eprintln!("unseen per frame {:?}, seen again {:?}", foreseen.unseen, foreseen.seen_again);
    // The camera turns through the crowd: characters leave the view (and
    // their shadows with them) and come back.
    assert!(foreseen.unseen.iter().all(|&n| n >= 5), "{:?}", foreseen.unseen);
    assert!(foreseen.seen_again.iter().sum::<usize>() >= 10, "{:?}", foreseen.seen_again);
    same_pictures(&whole, &foreseen, "posed on the CPU");
    // Posed on the GPU: the pose pass poses only what some pass draws.
    let gpu_whole = turn(&ctx, &model, &ground, false, true);
    let gpu_foreseen = turn(&ctx, &model, &ground, true, true);
    same_pictures(&gpu_whole, &gpu_foreseen, "posed on the GPU");
    let drawn: Vec<usize> = gpu_foreseen.unseen.iter().map(|u| SIDE * SIDE - u).collect();
    assert_eq!(gpu_foreseen.gpu_posed, drawn, "the GPU posed what some pass draws");
    assert_eq!(gpu_whole.gpu_posed, drawn, "drawn by no pass, foreseen or not");
    assert_no_messages(&ctx.validation_messages());
}

#[test]
fn a_small_crowd_is_posed_at_the_rates_its_size_allows() {
    let Some(ctx) = context() else { return };
    let model = Arc::new(load_default_character().expect("built-in character"));
    let mut renderer = renderer(&ctx, &model, None);
    let mut crowd = crowd(&model);
    // The whole crowd framed: each character a few dozen pixels tall.
    let half = 1.5 * (SIDE as f32 - 1.0) * 0.5 + 0.5;
    let camera =
        Camera::frame_box([-half, 0.0, -half], [half, 2.0, half], W as f32 / H as f32, DEFAULT_FOV_Y);
    let mut ignore = |_: u64, _: &[u8]| Ok(());
    let versions = |c: &Crowd| c.characters().iter().map(Character::version).collect::<Vec<_>>();
    let mut posed = Vec::new();
    for i in 0..12 {
        let before = versions(&crowd);
        renderer.pose_foreseen(&mut crowd, i, &camera).expect("pose");
        let after = versions(&crowd);
        posed.push(before.iter().zip(&after).filter(|(b, a)| b != a).count());
        assert_eq!(crowd.posed(), posed[i as usize], "the crowd counts what it posed");
        renderer.render_frame(&ctx, &crowd, &camera, true, &mut ignore).expect("render");
    }
    let rates: Vec<EvaluationRate> = crowd.characters().iter().map(Character::evaluation_rate).collect();
    eprintln!("posed per frame {posed:?}, rates {:?}", &rates[..SIDE]);
    assert!(rates.iter().all(|r| r.period() >= 2 && *r != EvaluationRate::Unseen), "{rates:?}");
    assert!(rates.iter().any(|r| r.period() >= 4), "{rates:?}");
    // The first frame poses everyone; then update k poses character i
    // when k + i is a multiple of its period (spread over the frames).
    assert_eq!(posed[0], SIDE * SIDE);
    for (k, &n) in posed.iter().enumerate().skip(1) {
        let due =
            rates.iter().enumerate().filter(|(i, r)| (k + i).is_multiple_of(r.period() as usize)).count();
        assert_eq!(n, due, "frame {k}: {posed:?}");
    }
    // At full detail every character is posed every frame.
    renderer.set_detail(DrawDetail::Full);
    let before = versions(&crowd);
    renderer.pose_foreseen(&mut crowd, 12, &camera).expect("pose");
    assert!(before.iter().zip(versions(&crowd)).all(|(b, a)| *b != a));
    assert!(crowd.count() == SIDE * SIDE);
    renderer.finish(&ctx, &mut ignore).expect("finish");
    renderer.destroy(&ctx);
    assert_no_messages(&ctx.validation_messages());
}
