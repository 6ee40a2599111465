package com.example.shop;

import dev.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class ReportController {

	@RateLimited(limit = 1, window = "1h")
	@GetMapping("/report")
	public String report() {
		return "report";
	}

}
