package dev.ratelimit.docs;

import dev.ratelimit.spring.RateLimited;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * The documentation's limit that counts only failed attempts: three wrong PINs per 15 minutes.
 */
@RestController
class PinController {

	@PostMapping("/pin")
	@RateLimited(limit = 3, window = "15m", countStatus = 403)
	String checkPin(@RequestParam String pin) {
		if (!"4711".equals(pin)) {
			throw new ResponseStatusException(HttpStatus.FORBIDDEN);
		}
		return "unlocked";
	}

}
