package sampler

import "github.com/macprof/macprof/target"

// reportImageHits hands the images a target's samples hit for the first
// time to Config.OnImagesHit, after the tick that captured them, while the
// target still lives (target.ImageHitReporter); an image the sampler's set
// does not hold yet (the target read its list again) has the set read
// again, so that the window names it.
func (s *Sampler) reportImageHits(ts *targetState) {
	r, ok := ts.t.(target.ImageHitReporter)
	if !ok || s.cfg.OnImagesHit == nil {
		return
	}
	s.hitImgs = r.ImagesHit(s.hitImgs[:0])
	if len(s.hitImgs) == 0 {
		return
	}
	for _, im := range s.hitImgs {
		if ts.images.Lookup(im.Start) != im {
			ts.refreshImages()
			break
		}
	}
	s.cfg.OnImagesHit(ts.t.PID(), s.hitImgs)
	clear(s.hitImgs)
}
